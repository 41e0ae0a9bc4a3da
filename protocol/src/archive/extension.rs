//! Extension entries of a tar stream (GNU long names and long link names,
//! pax records), read here rather than by the tar crate.
//!
//! The tar crate reads an extension entry whole into memory, however large
//! the sender says it is, so a hostile sender could make the receiver
//! allocate as much as it sends. Reading the stream raw and taking these
//! entries with a cap keeps memory bounded whoever made the archive.
//!
//! A pax `size` record would change how many bytes the next entry holds,
//! which a raw reader cannot follow; file_transfer's own archives never
//! carry one (the tar crate writes large sizes in the GNU binary form), so
//! an archive whose `size` record disagrees with its header is refused.

use super::error::Malformed;
use super::trailer::{parse_trailer, SkippedTrailer};
use std::io::Read;

/// Most bytes a long name, long link name or pax record set may hold.
/// Paths on Linux and Windows are far shorter.
pub const EXTENSION_BYTES_MAX: u64 = 64 * 1024;

/// Most bytes of the global header that carries the sender's skipped list
/// (at most [`crate::transfer::SKIPPED_LISTED_MAX`] entries).
pub const TRAILER_BYTES_MAX: u64 = 16 * 1024 * 1024;

/// What extension entries said about the next real entry.
#[derive(Debug, Default)]
pub struct Extended {
    pub path: Option<Vec<u8>>,
    pub link: Option<Vec<u8>>,
    size: Option<u64>,
}

/// What one entry of the stream turned out to be.
pub enum Seen {
    /// An extension for the next entry, now in [`Extended`].
    Extension,
    /// A pax global header, with the sender's skipped list when it is ours.
    Global(Option<SkippedTrailer>),
    /// A real entry (file, folder, link, ...), for the caller.
    Entry,
}

impl Extended {
    /// Takes `entry` into `self` when it is an extension entry. Errors are
    /// the archive's fault and say why.
    pub fn absorb<R: Read>(&mut self, entry: &mut tar::Entry<'_, R>) -> Result<Seen, Malformed> {
        let kind = entry.header().entry_type();
        if kind.is_gnu_longname() {
            self.path = Some(strip_nul(read_capped(
                entry,
                "long name",
                EXTENSION_BYTES_MAX,
            )?));
        } else if kind.is_gnu_longlink() {
            self.link = Some(strip_nul(read_capped(
                entry,
                "long link name",
                EXTENSION_BYTES_MAX,
            )?));
        } else if kind.is_pax_local_extensions() {
            let records = read_capped(entry, "pax header", EXTENSION_BYTES_MAX)?;
            self.take_pax(&records)?;
        } else if kind.is_pax_global_extensions() {
            return read_global(entry).map(Seen::Global);
        } else if kind.is_gnu_sparse() {
            return Err(Malformed(
                "it holds a sparse file, which file_transfer does not write".to_string(),
            ));
        } else {
            return Ok(Seen::Entry);
        }
        Ok(Seen::Extension)
    }

    /// Checks the extensions against the real entry they describe.
    pub fn check_size(&self, header: &tar::Header) -> Result<(), Malformed> {
        let (Some(pax_size), Ok(header_size)) = (self.size, header.entry_size()) else {
            return Ok(());
        };
        if pax_size != header_size {
            return Err(Malformed(format!(
                "a pax `size` record ({pax_size}) disagrees with its header ({header_size})"
            )));
        }
        Ok(())
    }

    fn take_pax(&mut self, records: &[u8]) -> Result<(), Malformed> {
        for record in tar::PaxExtensions::new(records) {
            let record =
                record.map_err(|e| Malformed(format!("a pax record is malformed: {e}")))?;
            match record.key_bytes() {
                b"path" => self.path = Some(record.value_bytes().to_vec()),
                b"linkpath" => self.link = Some(record.value_bytes().to_vec()),
                b"size" => {
                    let size = record
                        .value()
                        .ok()
                        .and_then(|v| v.parse().ok())
                        .ok_or_else(|| {
                            Malformed("a pax `size` record is not a number".to_string())
                        })?;
                    self.size = Some(size);
                }
                _ => {}
            }
        }
        Ok(())
    }
}

fn read_global<R: Read>(
    entry: &mut tar::Entry<'_, R>,
) -> Result<Option<SkippedTrailer>, Malformed> {
    let records = read_capped(entry, "pax global header", TRAILER_BYTES_MAX)?;
    parse_trailer(&records)
}

/// The whole data of `entry`, refused unread when it says it holds more
/// than `max` bytes.
fn read_capped<R: Read>(
    entry: &mut tar::Entry<'_, R>,
    what: &str,
    max: u64,
) -> Result<Vec<u8>, Malformed> {
    let size = entry.size();
    if size > max {
        return Err(Malformed(format!(
            "a {what} of {size} bytes is over the limit of {max} bytes"
        )));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    entry
        .read_to_end(&mut bytes)
        .map_err(|e| Malformed(format!("reading a {what}: {e}")))?;
    Ok(bytes)
}

/// GNU long names end with a NUL.
fn strip_nul(mut bytes: Vec<u8>) -> Vec<u8> {
    if bytes.last() == Some(&0) {
        bytes.pop();
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One tar entry of `kind` holding `data`, followed by a file `f` of
    /// `file_size` bytes, as raw bytes.
    fn archive(kind: tar::EntryType, data: &[u8], file_size: usize) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(kind);
        header.set_path("ext").unwrap();
        header.set_size(data.len() as u64);
        header.set_cksum();
        builder.append(&header, data).unwrap();
        let mut header = tar::Header::new_gnu();
        header.set_path("f").unwrap();
        header.set_size(file_size as u64);
        header.set_cksum();
        builder.append(&header, &vec![b'x'; file_size][..]).unwrap();
        builder.into_inner().unwrap()
    }

    /// Reads the raw entries of `bytes` as the unpacker does: what the
    /// extensions said about the first real entry, or the first error.
    fn first_entry(bytes: &[u8]) -> Result<(Extended, Vec<u8>, u64), Malformed> {
        let mut archive = tar::Archive::new(bytes);
        let mut extended = Extended::default();
        for entry in archive.entries().unwrap().raw(true) {
            let mut entry = entry.unwrap();
            match extended.absorb(&mut entry)? {
                Seen::Extension | Seen::Global(_) => continue,
                Seen::Entry => {
                    extended.check_size(entry.header())?;
                    let name = entry.path_bytes().into_owned();
                    return Ok((extended, name, entry.size()));
                }
            }
        }
        Err(Malformed("no entry".to_string()))
    }

    #[test]
    fn a_gnu_long_name_names_the_next_entry() {
        let long = format!("{}\0", "d/".repeat(100));
        let (extended, _, size) =
            first_entry(&archive(tar::EntryType::GNULongName, long.as_bytes(), 3)).unwrap();
        assert_eq!(extended.path.unwrap(), "d/".repeat(100).as_bytes());
        assert_eq!(size, 3);
    }

    #[test]
    fn pax_records_give_path_and_link_and_a_matching_size() {
        let records = "12 path=p/q\n14 linkpath=t\n9 size=5\n";
        let (extended, name, _) =
            first_entry(&archive(tar::EntryType::XHeader, records.as_bytes(), 5)).unwrap();
        assert_eq!(extended.path.unwrap(), b"p/q");
        assert_eq!(extended.link.unwrap(), b"t");
        assert_eq!(name, b"f");
    }

    #[test]
    fn a_pax_size_that_disagrees_with_its_header_is_refused() {
        let records = "9 size=9\n";
        let why = first_entry(&archive(tar::EntryType::XHeader, records.as_bytes(), 5))
            .err()
            .unwrap();
        assert!(why.0.contains("pax `size` record (9)"), "{why}");
    }

    #[test]
    fn an_oversized_long_name_is_refused_before_it_is_read() {
        let huge = vec![b'a'; EXTENSION_BYTES_MAX as usize + 1];
        let why = first_entry(&archive(tar::EntryType::GNULongName, &huge, 1))
            .err()
            .unwrap();
        assert!(why.0.contains("over the limit of 65536 bytes"), "{why}");
    }

    #[test]
    fn sparse_files_are_refused() {
        let why = first_entry(&archive(tar::EntryType::GNUSparse, b"", 1))
            .err()
            .unwrap();
        assert!(why.0.contains("sparse"), "{why}");
    }
}
