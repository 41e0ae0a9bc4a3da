//! The numeric limits of the tool contract. Both sides check against these, so
//! an error message and the check it explains always agree.

/// Session titles, in characters.
pub const TITLE_MAX_CHARS: usize = 80;
/// How long after its owner's last heartbeat a session may end, in seconds
/// (`SessionSettings::heartbeat_window_secs`): at least a few beats of a
/// host that beats every second or two, at most an hour.
pub const HEARTBEAT_WINDOW_MIN_SECS: u64 = 3;
pub const HEARTBEAT_WINDOW_MAX_SECS: u64 = 3600;
/// Most bytes of an API answer the host reads, by what the answer carries
/// (each endpoint names its own, `endpoints::Endpoint::ANSWER_MAX`), so
/// that a computer that never stops answering cannot fill the host's
/// memory: small JSON...
pub const ANSWER_SMALL: usize = 1024 * 1024;
/// ...listings of up to 1000 names, read files (an image up to 1 MB, in
/// base64) and transfer summaries...
pub const ANSWER_LISTING: usize = 8 * 1024 * 1024;
/// ...and answers that carry a screenshot (a PNG in base64), which a
/// screen full of noise makes several MiB.
pub const ANSWER_FRAME: usize = 64 * 1024 * 1024;
/// Actions in one `computer_act` batch.
pub const ACTIONS_MAX: usize = 24;
/// `wait` actions and `settle_ms`, in milliseconds.
pub const WAIT_MAX_MS: u64 = 5000;
/// Default `settle_ms`.
pub const SETTLE_DEFAULT_MS: u64 = 300;
/// Characters of one `type` action. Typing holds the screen while it runs,
/// and characters missing from the keymap take up to half a second each.
pub const TYPE_TEXT_MAX_CHARS: usize = 10_000;
/// Scroll steps per action.
pub const SCROLL_STEPS_MIN: u32 = 1;
pub const SCROLL_STEPS_MAX: u32 = 20;
pub const SCROLL_STEPS_DEFAULT: u32 = 3;
/// Screens of one computer.
pub const SCREENS_MAX: u8 = 16;
/// Screen sides, in pixels.
pub const SCREEN_SIDE_MIN: u32 = 320;
pub const SCREEN_SIDE_MAX: u32 = 7680;
/// Bytes kept at each end of a long shell stream or text file.
pub const KEEP_HEAD_TAIL_BYTES: usize = 15_000;
/// Entries listed by `list_files`.
pub const LIST_MAX_ENTRIES: usize = 1000;
/// Images returned by `read_file`.
pub const READ_IMAGE_MAX_BYTES: u64 = 1024 * 1024;
/// Content of `write_file`.
pub const WRITE_MAX_BYTES: usize = 10 * 1024 * 1024;
/// Identical unchanged batches allowed in a row; the next one is refused.
pub const REPEAT_UNCHANGED_MAX: u32 = 3;
