//! `file_transfer`: the messages around the tar stream, and the rules both
//! ends apply to it.
//!
//! # Layout
//! - [`messages`]: checks before any data moves, the source of a download,
//!   and the summary of what was written.
//! - [`destination`]: the `cp -r` rule and what an entry may do to what is
//!   already there (create, replace, merge, or clash).
//! - [`names`]: archive entry names that stay below the copied item.
//! - [`windows`]: names and symlinks that Windows rejects.
//! - [`caution`]: entries written that could make the receiver run the
//!   sender's code later, listed for a look.
//!
//! The rules are pure so that both ends share one definition and it is
//! tested without a filesystem; the `archive` feature applies them to real
//! files (`crate::archive`).

pub mod caution;
pub mod destination;
pub mod messages;
pub mod names;
pub mod windows;

pub use caution::{git_caution, symlink_leaves_copy, symlink_surely_inside};
pub use destination::{final_path, step, Clash, EntryKind, Found, Step};
pub use messages::{
    Caution, CautionKind, ItemKind, SkipKind, Skipped, SourceRequest, TransferDirection,
    TransferSource, TransferSummary, UploadRequest, UploadTarget, CAUTIONS_LISTED_MAX,
    SKIPPED_LISTED_MAX,
};
pub use names::{entry_parts, item_name_problem, parts_below, UnsafeName};
pub use windows::{windows_name_problem, windows_symlink_problem, WindowsNameProblem};
