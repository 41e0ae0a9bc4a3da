//! One open recording: a handle the session holds, and the writer task
//! that owns its files.
//!
//! Nothing on the agent's path waits for the disk. A frame the session
//! captured is handed over as bytes (`frame`), a step as the host sent it
//! (`step`); the writer hashes and stores each frame once, and turns each
//! step into its final form (before and after frames, click points on the
//! before frame, the page shown) before appending it to the journal. Events
//! arrive in one queue, so a step always finds the frames its call captured.

use super::package;
use super::store::{FrameLine, Meta, Store};
use super::summary::{kind_of, summary};
use crate::browser::shown::shown_page;
use crate::browser::Browsers;
use computer_protocol::recording::{
    FrameFile, PageShown, RecordingId, RecordingPackage, RecordingTally, Step, StepPoint,
    StepRecord,
};
use computer_protocol::{FrameTransform, ImageFormat, ScreenNumber};
use parking_lot::Mutex;
use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

/// Frames kept for steps to find by id; a step names the frame its own
/// call showed, moments earlier.
const FRAMES_TRACKED: usize = 32;

/// A frame computerd captured and showed (or would have shown) the agent.
pub struct FrameSeen {
    pub frame_id: u64,
    /// The encoded frame, as the agent got it.
    pub bytes: Vec<u8>,
    pub format: ImageFormat,
    pub transform: FrameTransform,
    pub active_window: Option<String>,
    pub screen: ScreenNumber,
}

enum Event {
    Frame(FrameSeen),
    Step(StepRecord),
    /// Answers once every event before it is on disk.
    Flush(oneshot::Sender<()>),
}

pub struct Recorder {
    pub id: RecordingId,
    pub meta: Meta,
    store: Store,
    events: mpsc::UnboundedSender<Event>,
    tally: Arc<Mutex<RecordingTally>>,
    closed: AtomicBool,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder").field("id", &self.id).finish()
    }
}

impl Recorder {
    /// Creates the recording's files and starts its writer.
    pub fn start(store: Store, meta: Meta, browsers: Arc<Browsers>) -> std::io::Result<Recorder> {
        store.create(&meta)?;
        let (events, queue) = mpsc::unbounded_channel();
        let tally = Arc::new(Mutex::new(RecordingTally::default()));
        let writer = Writer {
            store: store.clone(),
            meta: meta.clone(),
            browsers,
            tally: Arc::clone(&tally),
            written: HashSet::new(),
            seen: VecDeque::new(),
            shown: None,
        };
        tokio::spawn(writer.run(queue));
        Ok(Recorder {
            id: meta.recording_id.clone(),
            meta,
            store,
            events,
            tally,
            closed: AtomicBool::new(false),
        })
    }

    /// Hands a captured frame to the writer.
    pub fn frame(&self, frame: FrameSeen) {
        let _ = self.events.send(Event::Frame(frame));
    }

    /// Hands a step to the writer; answers what the recording held before
    /// it (the host tells the agent when it is full).
    pub fn step(&self, step: StepRecord) -> RecordingTally {
        let _ = self.events.send(Event::Step(step));
        self.tally()
    }

    pub fn tally(&self) -> RecordingTally {
        *self.tally.lock()
    }

    pub fn is_open(&self) -> bool {
        !self.closed.load(Ordering::SeqCst)
    }

    /// Waits until everything handed over so far is written.
    pub async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        if self.events.send(Event::Flush(done)).is_ok() {
            let _ = wait.await;
        }
    }

    /// Writes what is pending, marks the recording ended and builds its
    /// package. A second close builds it again.
    pub async fn close(&self) -> std::io::Result<RecordingPackage> {
        self.flush().await;
        self.closed.store(true, Ordering::SeqCst);
        let store = self.store.clone();
        let full = self.tally().full;
        tokio::task::spawn_blocking(move || {
            let mut meta = store.read_meta()?;
            meta.ended_at = Some(crate::clock::now_rfc3339());
            meta.full |= full;
            store.write_meta(&meta)?;
            package::build(&store)
        })
        .await
        .map_err(std::io::Error::other)?
    }

    /// The package as it stands, the recording still open.
    pub async fn snapshot(&self) -> std::io::Result<RecordingPackage> {
        self.flush().await;
        let store = self.store.clone();
        tokio::task::spawn_blocking(move || package::build(&store))
            .await
            .map_err(std::io::Error::other)?
    }
}

/// A frame as a step refers to it.
#[derive(Clone)]
struct Seen {
    /// `frames/<sha256>.<ext>`; none when the recording was full.
    path: Option<String>,
    /// Its file was written for this frame (no earlier frame had the same
    /// bytes), so a step that typed a secret may take it back.
    fresh: bool,
    transform: FrameTransform,
    active_window: Option<String>,
    screen: ScreenNumber,
}

struct Writer {
    store: Store,
    meta: Meta,
    browsers: Arc<Browsers>,
    tally: Arc<Mutex<RecordingTally>>,
    /// Frame files already on disk.
    written: HashSet<String>,
    seen: VecDeque<(u64, Seen)>,
    /// The frame the latest screen step showed: the next one's "before".
    shown: Option<Seen>,
}

impl Writer {
    async fn run(mut self, mut queue: mpsc::UnboundedReceiver<Event>) {
        while let Some(event) = queue.recv().await {
            let written = match event {
                Event::Frame(frame) => self.frame(frame),
                Event::Step(step) => self.step(step).await,
                Event::Flush(done) => {
                    let _ = done.send(());
                    Ok(())
                }
            };
            if let Err(e) = written {
                tracing::warn!(recording = %self.meta.recording_id, "recording write failed: {e}");
            }
        }
    }

    /// Whether `bytes` more fit; the first that does not makes the
    /// recording full for good.
    fn room_for(&mut self, bytes: u64) -> std::io::Result<bool> {
        // Other recordings and the agent's files share the disk: past its
        // floor this one stops growing too.
        let disk_short = super::retention::short_of_room(&self.store.dir, bytes).is_some();
        let fits = {
            let mut tally = self.tally.lock();
            if !tally.full && (tally.bytes + bytes > self.meta.max_bytes || disk_short) {
                tally.full = true;
            }
            !tally.full
        };
        if !fits && !self.meta.full {
            self.meta.full = true;
            self.store.write_meta(&self.meta)?;
            tracing::warn!(recording = %self.meta.recording_id, max_bytes = self.meta.max_bytes, disk_short, "recording is full; it stops growing");
        }
        Ok(fits)
    }

    fn count(&self, bytes: u64, step: bool) {
        let mut tally = self.tally.lock();
        tally.bytes += bytes;
        if step {
            tally.steps += 1;
        }
    }

    fn frame(&mut self, frame: FrameSeen) -> std::io::Result<()> {
        let ext = match frame.format {
            ImageFormat::Png => "png",
            ImageFormat::Jpeg => "jpg",
        };
        let path = format!("frames/{}.{ext}", package::sha256_hex(&frame.bytes));
        let fresh = !self.written.contains(&path);
        let stored = if !fresh {
            Some(path)
        } else if self.room_for(frame.bytes.len() as u64)? {
            let file = self.store.package_dir().join(&path);
            super::store::write_atomically(&file, &frame.bytes)?;
            let line = FrameLine {
                path: path.clone(),
                file: FrameFile {
                    width: frame.transform.frame_width,
                    height: frame.transform.frame_height,
                    bytes: frame.bytes.len() as u64,
                },
            };
            let line_bytes = self.store.append_line("frames.jsonl", &line)?;
            self.count(frame.bytes.len() as u64 + line_bytes, false);
            self.written.insert(path.clone());
            Some(path)
        } else {
            None
        };
        self.seen.push_back((
            frame.frame_id,
            Seen {
                fresh: fresh && stored.is_some(),
                path: stored,
                transform: frame.transform,
                active_window: frame.active_window,
                screen: frame.screen,
            },
        ));
        while self.seen.len() > FRAMES_TRACKED {
            self.seen.pop_front();
        }
        Ok(())
    }

    async fn step(&mut self, record: StepRecord) -> std::io::Result<()> {
        let index = self.tally.lock().steps + 1;
        let after = record
            .frame_id
            .and_then(|id| self.seen.iter().rev().find(|(f, _)| *f == id))
            .map(|(_, seen)| seen.clone());
        let (before, after) = if record.secret {
            // The screen may show what was typed: its frame is dropped, and
            // the next step starts with no before frame.
            if let Some(seen) = &after {
                self.forget_frame(seen)?;
            }
            (self.shown.take(), None)
        } else {
            let before = match &after {
                Some(after) => self.shown.replace(after.clone()),
                None => None,
            };
            (before, after)
        };
        let page = match &after {
            Some(after) => self.page_shown(after).await,
            None => None,
        };
        let network = network_during(&record.started_at, record.duration_ms).await;
        let marked_on = before.as_ref().or(after.as_ref());
        let points = record
            .points
            .iter()
            .map(|p| {
                let (left, top) = marked_on
                    .and_then(|f| fraction_of(&f.transform, p.x, p.y))
                    .unzip();
                StepPoint {
                    x: p.x,
                    y: p.y,
                    left,
                    top,
                }
            })
            .collect();
        let step = Step {
            index,
            kind: kind_of(&record.tool).to_string(),
            summary: summary(
                &record.tool,
                &record.arguments,
                record.is_error,
                &record.text,
            ),
            tool: record.tool,
            arguments: record.arguments,
            started_at: record.started_at,
            duration_ms: record.duration_ms,
            is_error: record.is_error,
            text: record.text,
            before: before.and_then(|f| f.path),
            after: after.as_ref().and_then(|f| f.path.clone()),
            points,
            page,
            active_window: after.and_then(|f| f.active_window),
            network,
        };
        let line = serde_json::to_vec(&step).map_err(std::io::Error::other)?;
        if self.room_for(line.len() as u64 + 1)? {
            let written = self.store.append_line("journal.jsonl", &step)?;
            self.count(written, true);
        }
        Ok(())
    }

    /// Removes the file of a frame a secret step showed, when it was
    /// written for that frame alone.
    fn forget_frame(&mut self, seen: &Seen) -> std::io::Result<()> {
        let Some(path) = seen.path.as_ref().filter(|_| seen.fresh) else {
            return Ok(());
        };
        self.written.remove(path);
        for (_, other) in self.seen.iter_mut() {
            if other.path.as_ref() == Some(path) {
                other.path = None;
            }
        }
        match std::fs::remove_file(self.store.package_dir().join(path)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    async fn page_shown(&self, frame: &Seen) -> Option<PageShown> {
        shown_page(&self.browsers, frame.screen, frame.active_window.as_deref()).await
    }
}

/// The computer's connections that started during a step (from its
/// RFC 3339 start, for its duration), one line each; none when the time
/// does not parse or no network guard answers.
async fn network_during(started_at: &str, duration_ms: u64) -> Vec<String> {
    let Ok(start) =
        time::OffsetDateTime::parse(started_at, &time::format_description::well_known::Rfc3339)
    else {
        return Vec::new();
    };
    let since_ms = (start.unix_timestamp_nanos() / 1_000_000).max(0) as u64;
    crate::netguard::started_between(since_ms, since_ms + duration_ms)
        .await
        .iter()
        .map(computer_protocol::network::NetworkLogEntry::line)
        .collect()
}

/// Where screen point (x, y) falls on a frame, as fractions of its width
/// and height; none when the frame (a zoomed region) does not show it.
fn fraction_of(transform: &FrameTransform, x: i32, y: i32) -> Option<(f64, f64)> {
    let region = transform.region;
    let (dx, dy) = (
        i64::from(x) - i64::from(region.x),
        i64::from(y) - i64::from(region.y),
    );
    if dx < 0 || dy < 0 || dx >= i64::from(region.width) || dy >= i64::from(region.height) {
        return None;
    }
    Some((
        (dx as f64 + 0.5) / f64::from(region.width),
        (dy as f64 + 0.5) / f64::from(region.height),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use computer_protocol::Region;

    #[test]
    fn points_are_placed_on_the_frame_that_shows_them() {
        let whole = FrameTransform {
            region: Region {
                x: 0,
                y: 0,
                width: 1000,
                height: 500,
            },
            frame_width: 500,
            frame_height: 250,
        };
        let (left, top) = fraction_of(&whole, 499, 249).unwrap();
        assert!((left - 0.4995).abs() < 1e-9 && (top - 0.499).abs() < 1e-9);
        let zoom = FrameTransform {
            region: Region {
                x: 100,
                y: 100,
                width: 100,
                height: 100,
            },
            ..whole
        };
        assert!(fraction_of(&zoom, 50, 150).is_none());
        assert!(fraction_of(&zoom, 150, 200).is_none());
        let (left, _) = fraction_of(&zoom, 100, 150).unwrap();
        assert!((left - 0.005).abs() < 1e-9);
    }
}
