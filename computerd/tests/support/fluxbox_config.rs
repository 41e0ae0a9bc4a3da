//! The computer's own Fluxbox settings (`image/fluxbox`) for native tests.
//!
//! Fluxbox's defaults are no good for tests: their style's wallpaper makes
//! `fbsetbg` pop up an `xmessage` ("Something went wrong while setting the
//! wallpaper") seconds after Fluxbox starts. That window joins the client
//! list and takes the focus from whatever a test focused. The image's
//! settings replace the wallpaper with a plain colour, so tests use them too,
//! with the image's install path pointed at a copy.
//!
//! The image's Fluxbox (1.3.7) applies `session.styleOverlay`; an older one
//! (Debian 12 has 1.3.5) ignores that setting and reads only
//! `$HOME/.fluxbox/overlay`, so [`write_home_overlay`] puts the overlay there
//! too, before Fluxbox starts (it would create a default one otherwise).
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// Where the image installs `image/fluxbox`; the init file names its
/// siblings by this path.
const IMAGE_PATH: &str = "/usr/local/share/computer-use/fluxbox";

/// The work tree's `image/fluxbox`.
pub fn source_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../image/fluxbox")
}

/// Copies the image's Fluxbox settings into `dir`, pointing the init file at
/// the copy; returns `dir`, for `fluxbox -rc <dir>/init` or
/// `COMPUTERD_FLUXBOX_DIR`.
pub fn write_to(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).expect("fluxbox settings folder");
    let entries = std::fs::read_dir(source_dir()).expect("image/fluxbox is readable");
    for entry in entries {
        let entry = entry.expect("image/fluxbox entry");
        let text = std::fs::read_to_string(entry.path()).expect("fluxbox settings file");
        let text = text.replace(IMAGE_PATH, &dir.display().to_string());
        std::fs::write(dir.join(entry.file_name()), text).expect("fluxbox settings copy");
    }
    dir.to_path_buf()
}

/// Writes the image's style overlay to `<home>/.fluxbox/overlay`, where a
/// Fluxbox older than the image's looks for it.
pub fn write_home_overlay(home: &Path) {
    let dir = home.join(".fluxbox");
    std::fs::create_dir_all(&dir).expect("~/.fluxbox");
    std::fs::copy(source_dir().join("overlay"), dir.join("overlay")).expect("~/.fluxbox/overlay");
}
