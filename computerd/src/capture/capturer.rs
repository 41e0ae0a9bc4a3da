//! [`Capturer`]: grabs the root window of one display. Through MIT-SHM
//! (when the server takes a segment) the segment holds a copy of the
//! screen that each grab brings up to date by reading only the boxes X
//! DAMAGE says were drawn since the last one (`damage`), and the
//! fingerprint rehashes only the tiles they touch (`tile_hashes`). Each
//! grab also tells what it re-read, so shaping can redo only that part
//! ([`Grab::drawn_since`]). Without SHM every grab is a plain `GetImage`
//! of the whole screen.

use super::area::{areas_to_read, Area, Drawn};
use super::convert::Rows;
use super::damage::{rectangles, DamageWatch};
use super::frame::Frame;
use super::pixels::PixelFormat;
use super::shm::ShmImage;
use super::tile_hashes::TileHashes;
use super::CaptureError;
use crate::display::Display;
use computer_protocol::Region;
use std::borrow::Cow;
use std::collections::VecDeque;
use x11rb::errors::ReplyError;
use x11rb::protocol::xproto::{ConnectionExt as _, ImageFormat};

/// Grabs kept in the history of what each re-read: shaping that last ran
/// more grabs ago than this redoes its frame whole.
const HISTORY: usize = 32;

/// Grabs frames of one display, reusing a shared-memory segment when MIT-SHM
/// works. Keep one per display connection: the segment and the DAMAGE
/// object stay on that connection until it closes.
pub struct Capturer {
    /// Pixel layout of the root window; read from the setup on first grab.
    format: Option<PixelFormat>,
    /// Whether grabs go through shared memory.
    shm: Shm,
    /// What the recent grabs re-read, newest last.
    history: History,
}

enum Shm {
    /// Not tried yet: the first grab attaches a segment.
    Untried,
    /// Attached, sized for the last grab.
    Ready(Mirror),
    /// Unavailable (remote connection, old server, refused): plain
    /// `GetImage` from now on.
    Off,
}

/// The segment as a copy of the screen.
struct Mirror {
    image: ShmImage,
    width: u16,
    height: u16,
    /// What was drawn since the last grab; `None` when the server has no
    /// DAMAGE or the pixels are not 4-byte words (each grab then reads the
    /// whole screen).
    damage: Option<DamageWatch>,
    /// Set once a read covered the whole screen: the copy is the screen as
    /// of the last grab.
    whole: bool,
    /// Tile hashes of the copy, when pixels are 4-byte words.
    hashes: Option<TileHashes>,
}

impl Mirror {
    fn stop(self, display: &Display) {
        if let Some(damage) = self.damage {
            damage.stop(&display.conn);
        }
        self.image.detach(display);
    }
}

/// Numbered grabs and the box each re-read (`None`: the whole screen, or
/// not known).
#[derive(Default)]
pub struct History {
    /// The latest grab's number; 0 before the first.
    latest: u64,
    reads: VecDeque<(u64, Option<Area>)>,
}

impl History {
    fn push(&mut self, read: Option<Area>) -> u64 {
        self.latest += 1;
        if self.reads.len() == HISTORY {
            self.reads.pop_front();
        }
        self.reads.push_back((self.latest, read));
        self.latest
    }

    /// What was drawn between grab `earlier` and the latest one.
    pub fn drawn_since(&self, earlier: u64) -> Drawn {
        if earlier == self.latest {
            return Drawn::Nothing;
        }
        if earlier == 0 || earlier > self.latest {
            return Drawn::Unknown;
        }
        let mut within = Area::default();
        let mut seen = 0;
        for (_, read) in self.reads.iter().filter(|(n, _)| *n > earlier) {
            seen += 1;
            match read {
                Some(area) => within = within.union(*area),
                None => return Drawn::Unknown,
            }
        }
        if seen as u64 != self.latest - earlier {
            return Drawn::Unknown;
        }
        if within.is_empty() {
            Drawn::Nothing
        } else {
            Drawn::Within(within)
        }
    }
}

impl Capturer {
    pub fn new(_display: &Display) -> Capturer {
        Capturer {
            format: None,
            shm: Shm::Untried,
            history: History::default(),
        }
    }

    /// A capturer that never uses shared memory; for comparing both paths.
    pub fn without_shm(_display: &Display) -> Capturer {
        Capturer {
            format: None,
            shm: Shm::Off,
            history: History::default(),
        }
    }

    /// True when the last grab went through a shared-memory segment.
    pub fn uses_shm(&self) -> bool {
        matches!(self.shm, Shm::Ready(_))
    }

    /// The screen now as an RGB frame.
    pub fn grab(&mut self, display: &Display) -> Result<Frame, CaptureError> {
        Ok(self.grab_raw(display)?.to_frame())
    }

    /// The screen now in the server's own pixel layout, unconverted: its
    /// fingerprint alone tells whether anything changed, and it converts
    /// to a frame only when one is shown.
    pub fn grab_raw(&mut self, display: &Display) -> Result<Grab<'_>, CaptureError> {
        let number = display.number;
        let format = match &self.format {
            Some(format) => format.clone(),
            None => {
                let format = PixelFormat::of_root(display)?;
                self.format = Some(format.clone());
                format
            }
        };
        // One round trip for the root's size (asked each time: RandR may
        // have resized the screen since the connection was made) and the
        // boxes drawn since the last grab.
        let geometry = display
            .conn
            .get_geometry(display.root)
            .map_err(CaptureError::send(number))?;
        let taken = match &self.shm {
            Shm::Ready(Mirror {
                damage: Some(damage),
                ..
            }) => Some(
                damage
                    .take(&display.conn)
                    .map_err(CaptureError::send(number))?,
            ),
            _ => None,
        };
        let geometry = geometry.reply().map_err(CaptureError::request(number))?;
        let drawn = taken.map(rectangles).and_then(Result::ok);
        // The connection's events: damage notices, the keyboard's mapping
        // notices (kept for it), and errors of requests that answer nothing
        // (taking the damage among them); after an error the copy is read
        // whole again.
        let faulted = display.drain_events().map_err(CaptureError::send(number))?;
        let drawn = drawn.filter(|_| !faulted);
        let (width, height) = (geometry.width, geometry.height);
        let expected = format.image_len(width, height);
        if let Some(read) = read_mirror(&mut self.shm, display, &format, width, height, drawn)? {
            let generation = self.history.push(read);
            let Shm::Ready(mirror) = &self.shm else {
                unreachable!("read_mirror left a mirror");
            };
            return Ok(Grab {
                width,
                height,
                data: Cow::Borrowed(&mirror.image.image()[..expected]),
                fingerprint: mirror.hashes.as_ref().map(TileHashes::fingerprint),
                format,
                generation,
                history: &self.history,
            });
        }
        let data = grab_plain(display, width, height)?;
        if data.len() < expected {
            return Err(CaptureError::ShortImage {
                display: number,
                width,
                height,
                got: data.len(),
                expected,
            });
        }
        let generation = self.history.push(None);
        let fingerprint = format.word_mask(width).map(|mask| {
            TileHashes::of(&data, u32::from(width), u32::from(height), mask).fingerprint()
        });
        Ok(Grab {
            width,
            height,
            data: Cow::Owned(data),
            fingerprint,
            format,
            generation,
            history: &self.history,
        })
    }
}

/// Brings the shared-memory copy up to date: the boxes in `drawn` (the
/// damage taken), or the whole screen when the copy is new, resized or
/// `drawn` is unknown. Gives the box re-read (`None` for the whole
/// screen), or `None` outside when SHM is off (and turns it off when it
/// fails now).
fn read_mirror(
    shm: &mut Shm,
    display: &Display,
    format: &PixelFormat,
    width: u16,
    height: u16,
    drawn: Option<Vec<x11rb::protocol::xproto::Rectangle>>,
) -> Result<Option<Option<Area>>, CaptureError> {
    let len = format.image_len(width, height);
    if len == 0 {
        return Ok(None);
    }
    let number = display.number;
    let previous = std::mem::replace(shm, Shm::Off);
    let fits = |m: &Mirror| m.width == width && m.height == height && m.image.len() == len;
    let mut mirror = match previous {
        Shm::Off => return Ok(None),
        Shm::Ready(mirror) if fits(&mirror) => mirror,
        Shm::Ready(mirror) => {
            mirror.stop(display);
            match start_mirror(display, format, len, width, height) {
                Some(mirror) => mirror,
                None => return Ok(None),
            }
        }
        Shm::Untried => {
            if let Err(reason) = ShmImage::supported(display) {
                tracing::info!(display = number, "capture without MIT-SHM: {reason}");
                return Ok(None);
            }
            match start_mirror(display, format, len, width, height) {
                Some(mirror) => mirror,
                None => return Ok(None),
            }
        }
    };
    let (w, h) = (u32::from(width), u32::from(height));
    let whole = Area::whole(w, h);
    let areas = match drawn {
        Some(rects) if mirror.whole && mirror.damage.is_some() => areas_to_read(&rects, w, h),
        _ => vec![whole],
    };
    let read_whole = areas == [whole];
    let result = if read_whole {
        mirror.image.read_whole(display, width, height)
    } else if areas.is_empty() {
        Ok(())
    } else {
        mirror
            .image
            .read_areas(display, format.stride(width), &areas)
    };
    match result {
        Ok(()) => {}
        Err(ReplyError::X11Error(error)) => {
            tracing::warn!(
                display = number,
                "MIT-SHM grab refused ({error:?}); capturing without it"
            );
            mirror.stop(display);
            return Ok(None);
        }
        Err(e) => return Err(CaptureError::request(number)(e)),
    }
    let data = &mirror.image.image()[..len];
    mirror.hashes = match (format.word_mask(width), mirror.hashes.take()) {
        (Some(_), Some(mut hashes)) if !read_whole => {
            hashes.update(data, &areas);
            Some(hashes)
        }
        (Some(mask), _) => Some(TileHashes::of(data, w, h, mask)),
        (None, _) => None,
    };
    mirror.whole = true;
    *shm = Shm::Ready(mirror);
    let read = areas.iter().fold(Area::default(), |acc, a| acc.union(*a));
    Ok(Some((!read_whole).then_some(read)))
}

/// A new segment for a `width` x `height` screen, with its damage
/// recording from before the first read when pixels are 4-byte words;
/// `None` (logged) when the server refuses the segment.
fn start_mirror(
    display: &Display,
    format: &PixelFormat,
    len: usize,
    width: u16,
    height: u16,
) -> Option<Mirror> {
    let number = display.number;
    let image = match ShmImage::create(display, len) {
        Ok(image) => image,
        Err(reason) => {
            tracing::info!(display = number, "capture without MIT-SHM: {reason}");
            return None;
        }
    };
    let damage = match format.word_mask(width) {
        Some(_) => DamageWatch::start(display).unwrap_or_else(|e| {
            tracing::info!(
                display = number,
                "capture reads whole screens: no DAMAGE ({e})"
            );
            None
        }),
        None => None,
    };
    Some(Mirror {
        image,
        width,
        height,
        damage,
        whole: false,
        hashes: None,
    })
}

/// One grab of the screen in the server's pixel layout (borrowed from the
/// shared-memory segment, which the next grab overwrites).
pub struct Grab<'a> {
    pub width: u16,
    pub height: u16,
    data: Cow<'a, [u8]>,
    /// Known when kept as tile hashes.
    fingerprint: Option<u64>,
    format: PixelFormat,
    /// This grab's number among its capturer's grabs.
    pub generation: u64,
    history: &'a History,
}

impl Grab<'_> {
    /// Tells screens apart like [`Frame::fingerprint`] tells frames apart
    /// (the two are not comparable): a hash of the size and the colour
    /// bits, read straight from the server's pixels when they are 4-byte
    /// words (Xvnc at depth 24), which costs no conversion.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
            .unwrap_or_else(|| self.to_frame().fingerprint())
    }

    /// What was drawn between grab number `earlier` of the same capturer
    /// and this one.
    pub fn drawn_since(&self, earlier: u64) -> Drawn {
        self.history.drawn_since(earlier)
    }

    /// The grab's rows in the server's layout.
    pub fn rows(&self) -> Rows<'_> {
        Rows {
            data: &self.data,
            stride: self.format.stride(self.width),
            format: &self.format,
        }
    }

    /// The grab as packed RGB8.
    pub fn to_frame(&self) -> Frame {
        let (width, height) = (u32::from(self.width), u32::from(self.height));
        let whole = Region {
            x: 0,
            y: 0,
            width,
            height,
        };
        Frame {
            width,
            height,
            rgb: self.rows().to_rgb(whole),
        }
    }
}

/// The screen through a plain `GetImage` reply.
fn grab_plain(display: &Display, width: u16, height: u16) -> Result<Vec<u8>, CaptureError> {
    let reply = display
        .conn
        .get_image(ImageFormat::Z_PIXMAP, display.root, 0, 0, width, height, !0)
        .map_err(CaptureError::send(display.number))?
        .reply()
        .map_err(CaptureError::request(display.number))?;
    Ok(reply.data)
}
