//! What the sender left out travels at the end of the archive, so the
//! receiver's reply lists everything skipped on either side. It is a pax
//! global header with a vendor keyword, which any other tar reader ignores.

use super::error::Malformed;
use crate::transfer::Skipped;
use serde::{Deserialize, Serialize};
use std::io::{self, Write};

/// The pax keyword; POSIX reserves upper-case `VENDOR.` prefixes for this.
pub const SKIPPED_KEY: &str = "COMPUTER_USE.skipped";

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct SkippedTrailer {
    pub entries: Vec<Skipped>,
    /// Skipped entries beyond the listed ones.
    pub more: u64,
}

/// Appends the trailer; nothing when nothing was skipped.
pub fn write_trailer<W: Write>(
    builder: &mut tar::Builder<W>,
    trailer: &SkippedTrailer,
) -> io::Result<()> {
    if trailer.entries.is_empty() && trailer.more == 0 {
        return Ok(());
    }
    let value = serde_json::to_string(trailer).map_err(io::Error::other)?;
    let record = pax_record(SKIPPED_KEY, &value);
    let mut header = tar::Header::new_ustar();
    header.set_entry_type(tar::EntryType::XGlobalHeader);
    header.set_path("pax_global_header")?;
    header.set_size(record.len() as u64);
    header.set_mode(0o644);
    header.set_cksum();
    builder.append(&header, record.as_bytes())
}

/// Reads the trailer from the records of a pax global header, if it is ours.
pub fn parse_trailer(records: &[u8]) -> Result<Option<SkippedTrailer>, Malformed> {
    for record in tar::PaxExtensions::new(records) {
        let record = record.map_err(|e| Malformed(format!("a pax record is malformed: {e}")))?;
        if record.key_bytes() == SKIPPED_KEY.as_bytes() {
            return serde_json::from_slice(record.value_bytes())
                .map(Some)
                .map_err(|e| Malformed(format!("its list of skipped entries is malformed: {e}")));
        }
    }
    Ok(None)
}

/// `<length> <key>=<value>\n`, where the length counts the whole record,
/// its own digits included.
fn pax_record(key: &str, value: &str) -> String {
    let body = key.len() + value.len() + 3; // space, `=`, newline
    let mut length = body + 1;
    while length != body + length.to_string().len() {
        length = body + length.to_string().len();
    }
    format!("{length} {key}={value}\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transfer::SkipKind;

    #[test]
    fn records_count_their_own_length() {
        assert_eq!(pax_record("k", "v"), "6 k=v\n");
        let long = "x".repeat(95);
        let record = pax_record("k", &long);
        assert_eq!(record.len().to_string(), record.split(' ').next().unwrap());
    }

    #[test]
    fn a_trailer_survives_the_trip() {
        let trailer = SkippedTrailer {
            entries: vec![Skipped {
                path: "proj/run.sock".into(),
                kind: SkipKind::Socket,
                reason: "a socket".into(),
            }],
            more: 2,
        };
        let mut builder = tar::Builder::new(Vec::new());
        write_trailer(&mut builder, &trailer).unwrap();
        let bytes = builder.into_inner().unwrap();
        let mut archive = tar::Archive::new(&bytes[..]);
        let mut entries = archive.entries().unwrap();
        let mut entry = entries.next().unwrap().unwrap();
        let mut records = Vec::new();
        std::io::Read::read_to_end(&mut entry, &mut records).unwrap();
        let read = parse_trailer(&records).unwrap().unwrap();
        assert_eq!(read.entries, trailer.entries);
        assert_eq!(read.more, 2);
    }
}
