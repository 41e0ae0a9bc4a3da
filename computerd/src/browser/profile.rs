//! The template profile in home, and the fresh user-data folders cloned from
//! it for each screen's Chromium.
//!
//! A Chromium never runs on the template itself: two screens' Chromiums
//! would then share one folder, which Chromium refuses (its profile lock).
//! So each Chromium gets a fresh folder holding copies of the [`KEPT`] files,
//! and when it closes cleanly, the files it created or changed go back into
//! the template. When two Chromiums change the same file, the one that
//! closes last wins: whole files, no merging.
//!
//! Changes are found by comparing each kept file with a [`Fingerprint`]
//! taken at clone time, so a file that Chromium only rewrote with the same
//! bytes does not overwrite a newer one another screen copied back.
//!
//! Everything here is blocking `std::fs`; the caller runs it on a blocking
//! thread.

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::fs::{self, DirBuilder, File, OpenOptions};
use std::hash::{DefaultHasher, Hasher};
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::preferences::{self, shared_part};

/// The files that carry over between Chromiums, relative to the user-data
/// folder.
///
/// Left out, on purpose:
/// - `Default/Cookies`: the cookie jar shares logins across running
///   Chromiums over DevTools; a copied file would bring back cookies the jar
///   has since dropped (a logout would not stick).
/// - `Default/History`, caches (`Cache`, `Code Cache`, `GPUCache`, ...):
///   large, per-screen, and not promised to carry over.
/// - `Default/Secure Preferences`, `Default/Extensions`, `Local State`:
///   the installed extensions and browser-wide state. Chromium checks these
///   against each other and against the extension files on disk; a copy of
///   one without the others makes it reset settings or drop extensions, and
///   uBlock Origin Lite installs itself again anyway.
///
/// `Login Data` and `Web Data` hold values Chromium encrypts. On Linux the
/// key comes from the desktop keyring or, with none in the container (the
/// basic password store), from a password built into Chromium, not from
/// `Local State`; so they stay readable in any clone.
pub const KEPT: [&str; 5] = [
    // Bookmarks (JSON, written by Chromium through temp + rename).
    "Default/Bookmarks",
    // Saved passwords (SQLite).
    "Default/Login Data",
    // Autofill entries, addresses, search engines (SQLite).
    "Default/Web Data",
    // Settings such as page zoom, downloads folder, startup pages (JSON);
    // only the parts in `preferences::SHARED`, never site permissions.
    PREFERENCES,
    // Icons shown next to bookmarks (SQLite).
    "Default/Favicons",
];

/// Chromium's settings file: not copied whole but filtered both ways, see
/// [`super::preferences`].
pub const PREFERENCES: &str = "Default/Preferences";

/// Suffixes of SQLite's side files. A rollback journal or write-ahead log
/// belongs to one exact database file; next to another one, SQLite would
/// "recover" it by writing the old pages into the new file.
const SQLITE_SIDE_SUFFIXES: [&str; 2] = ["-journal", "-wal"];

/// The template profile in home, shared by every screen's Chromium.
#[derive(Debug)]
pub struct Template {
    /// `~/.local/share/computer-use/chromium-template`: a user-data folder
    /// holding only the [`KEPT`] files.
    dir: PathBuf,
    /// Held while cloning and while copying back, so a clone never sees a
    /// half-finished copy-back, and two copy-backs finish in the order they
    /// took the lock (last close wins).
    lock: Mutex<()>,
}

/// A user-data folder cloned from the template, with what its kept files
/// were at clone time.
#[derive(Debug, Clone)]
pub struct ProfileClone {
    /// The Chromium's `--user-data-dir`.
    user_data_dir: PathBuf,
    /// For each of [`KEPT`], its fingerprint at clone time, or `None` when
    /// the template had no such file (so one Chromium creates is new).
    at_clone: BTreeMap<&'static str, Option<Fingerprint>>,
    /// The shared settings the clone got (an empty object when none), so
    /// a copy-back takes only the ones this browser changed.
    preferences_at_clone: Value,
}

/// Enough of a file to tell whether it changed: its length and a hash of its
/// bytes. The hash is std's SipHash with fixed keys, which is stable within
/// one computerd process, the only place fingerprints are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fingerprint {
    len: u64,
    hash: u64,
}

impl Template {
    /// The template at `~/.local/share/computer-use/chromium-template`. The
    /// folder is created by the first [`Template::copy_back`] that has
    /// something to keep.
    pub fn in_home(home: &Path) -> Template {
        Template::at(home.join(".local/share/computer-use/chromium-template"))
    }

    /// A template in any folder (tests, other homes).
    pub fn at(dir: PathBuf) -> Template {
        Template {
            dir,
            lock: Mutex::new(()),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Empties `user_data_dir` (or creates it, mode 0700) and copies into it
    /// the kept files the template has.
    pub fn clone_to(&self, user_data_dir: &Path) -> io::Result<ProfileClone> {
        let _held = self.lock.lock();
        // A folder left from an earlier Chromium on this screen would bring
        // back its cookies, history and lock files.
        match fs::remove_dir_all(user_data_dir) {
            Ok(()) => {}
            Err(err) if err.kind() == io::ErrorKind::NotFound => {}
            Err(err) => return Err(with_path(err, "empty", user_data_dir)),
        }
        private_dir(user_data_dir)?;

        let mut at_clone = BTreeMap::new();
        let mut preferences_at_clone = Value::Object(Map::new());
        for name in KEPT {
            let from = self.dir.join(name);
            if name == PREFERENCES {
                let to = user_data_dir.join(name);
                let fingerprint = match read_json(&from)? {
                    None => None,
                    Some(template) => {
                        preferences_at_clone = shared_part(&template);
                        private_dir(parent(&to))?;
                        write_atomically(&to, |file| {
                            serde_json::to_writer(file, &preferences_at_clone)
                                .map_err(io::Error::from)
                        })?;
                        fingerprint(&to)?
                    }
                };
                at_clone.insert(name, fingerprint);
                continue;
            }
            let fingerprint = match regular_file(&from)? {
                false => None,
                true => {
                    let to = user_data_dir.join(name);
                    private_dir(parent(&to))?;
                    fs::copy(&from, &to).map_err(|err| with_path(err, "copy", &from))?;
                    fingerprint(&to)?
                }
            };
            at_clone.insert(name, fingerprint);
        }
        Ok(ProfileClone {
            user_data_dir: user_data_dir.to_path_buf(),
            at_clone,
            preferences_at_clone,
        })
    }

    /// Copies into the template each kept file the Chromium created or
    /// changed since `clone` was made, and returns their names (from
    /// [`KEPT`]). Call it once the Chromium has closed cleanly: a crashed
    /// one may have left files half written.
    ///
    /// Each file is replaced atomically (temp + rename). A file the Chromium
    /// removed stays in the template: a missing file more likely means a
    /// failed start than a wish to forget every bookmark. A SQLite file whose
    /// clone still has a non-empty journal or write-ahead log is skipped:
    /// without it the file is not consistent.
    pub fn copy_back(&self, clone: &ProfileClone) -> io::Result<Vec<String>> {
        let _held = self.lock.lock();
        let mut copied = Vec::new();
        for (name, before) in &clone.at_clone {
            let from = clone.user_data_dir.join(name);
            if !regular_file(&from)? {
                continue;
            }
            let now = fingerprint(&from)?;
            if now == *before {
                continue;
            }
            if *name == PREFERENCES {
                if self.copy_back_preferences(clone, &from)? {
                    copied.push(name.to_string());
                }
                continue;
            }
            if let Some(side) = nonempty_side_file(&from)? {
                tracing::warn!(
                    file = %from.display(),
                    side = %side.display(),
                    "not copying a profile file back: its SQLite journal is not empty"
                );
                continue;
            }
            let to = self.dir.join(name);
            private_dir(parent(&to))?;
            replace_atomically(&from, &to)?;
            // Only after the new file is in place: a journal removed first
            // would leave the old file without its journal if the copy failed.
            remove_side_files(&to)?;
            copied.push(name.to_string());
        }
        Ok(copied)
    }
}

impl Template {
    /// Puts into the template's `Preferences` the shared settings the
    /// clone's browser changed ([`preferences::merge`]); the template's
    /// file then holds shared settings only. Returns whether it changed.
    fn copy_back_preferences(&self, clone: &ProfileClone, from: &Path) -> io::Result<bool> {
        let Some(now) = read_json(from)? else {
            return Ok(false);
        };
        let to = self.dir.join(PREFERENCES);
        let template = read_json(&to)?.unwrap_or_else(|| Value::Object(Map::new()));
        let merged = preferences::merge(&template, &clone.preferences_at_clone, &now);
        if merged == template {
            return Ok(false);
        }
        private_dir(parent(&to))?;
        write_atomically(&to, |file| {
            serde_json::to_writer(file, &merged).map_err(io::Error::from)
        })?;
        Ok(true)
    }
}

impl ProfileClone {
    /// The folder to pass Chromium as `--user-data-dir`.
    pub fn user_data_dir(&self) -> &Path {
        &self.user_data_dir
    }
}

/// The JSON in the regular file at `path`; `None` when it is missing (see
/// [`regular_file`]) or not JSON, which is logged: Chromium rewrites a
/// broken settings file with its defaults anyway.
fn read_json(path: &Path) -> io::Result<Option<Value>> {
    if !regular_file(path)? {
        return Ok(None);
    }
    let bytes = fs::read(path).map_err(|err| with_path(err, "read", path))?;
    match serde_json::from_slice(&bytes) {
        Ok(value) => Ok(Some(value)),
        Err(err) => {
            tracing::warn!(file = %path.display(), line = err.line(), column = err.column(), "not carrying over browser settings that are not JSON");
            Ok(None)
        }
    }
}

/// True when `path` is a regular file, false when it is missing. A symlink
/// or folder where a kept file should be counts as missing: following it
/// could copy a file from anywhere into the template.
fn regular_file(path: &Path) -> io::Result<bool> {
    match fs::symlink_metadata(path) {
        Ok(metadata) => Ok(metadata.is_file()),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(err) => Err(with_path(err, "inspect", path)),
    }
}

/// The fingerprint of a regular file, or `None` when it is missing.
fn fingerprint(path: &Path) -> io::Result<Option<Fingerprint>> {
    if !regular_file(path)? {
        return Ok(None);
    }
    let mut file = File::open(path).map_err(|err| with_path(err, "open", path))?;
    let mut hasher = DefaultHasher::new();
    let mut len = 0u64;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = file
            .read(&mut buf)
            .map_err(|err| with_path(err, "read", path))?;
        if n == 0 {
            break;
        }
        hasher.write(&buf[..n]);
        len += n as u64;
    }
    Ok(Some(Fingerprint {
        len,
        hash: hasher.finish(),
    }))
}

/// The first SQLite side file next to `db` that holds data. Chromium
/// truncates its journals to zero bytes at each commit (and removes its
/// write-ahead log on close), so an empty or missing one is fine.
fn nonempty_side_file(db: &Path) -> io::Result<Option<PathBuf>> {
    for suffix in SQLITE_SIDE_SUFFIXES {
        let side = with_suffix(db, suffix);
        match fs::symlink_metadata(&side) {
            Ok(metadata) if metadata.len() > 0 => return Ok(Some(side)),
            Ok(_) => {}
            Err(err) if err.kind() == io::ErrorKind::NotFound => {}
            Err(err) => return Err(with_path(err, "inspect", &side)),
        }
    }
    Ok(None)
}

/// Removes the SQLite side files next to `db` in the template.
fn remove_side_files(db: &Path) -> io::Result<()> {
    for suffix in SQLITE_SIDE_SUFFIXES {
        let side = with_suffix(db, suffix);
        match fs::remove_file(&side) {
            Ok(()) => {}
            Err(err) if err.kind() == io::ErrorKind::NotFound => {}
            Err(err) => return Err(with_path(err, "remove", &side)),
        }
    }
    Ok(())
}

/// Replaces `to` with a copy of `from`: the bytes go to a temp file next to
/// `to`, are synced, and the temp file is renamed over `to`, so the template
/// holds the old file or the new one, never half of either.
fn replace_atomically(from: &Path, to: &Path) -> io::Result<()> {
    let mut source = File::open(from).map_err(|err| with_path(err, "open", from))?;
    write_atomically(to, |target| {
        io::copy(&mut source, target)
            .map(drop)
            .map_err(|err| with_path(err, "copy", from))
    })
}

/// Replaces `to` with what `fill` writes: into a temp file next to `to`,
/// synced, then renamed over `to`.
fn write_atomically(to: &Path, fill: impl FnOnce(&mut File) -> io::Result<()>) -> io::Result<()> {
    // The pid keeps two computerd processes (one leaving, one starting) off
    // each other's temp file; within one process the lock does.
    let temp = with_suffix(to, &format!(".computer-use-{}.tmp", std::process::id()));
    let result = (|| {
        // 0600: saved passwords and autofill data are private.
        let mut target = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&temp)
            .map_err(|err| with_path(err, "create", &temp))?;
        fill(&mut target)?;
        target
            .flush()
            .map_err(|err| with_path(err, "write", &temp))?;
        target
            .sync_all()
            .map_err(|err| with_path(err, "sync", &temp))?;
        fs::rename(&temp, to).map_err(|err| with_path(err, "rename", &temp))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// Creates `dir` and its missing parents with mode 0700: the profile holds
/// passwords.
fn private_dir(dir: &Path) -> io::Result<()> {
    DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|err| with_path(err, "create", dir))
}

fn parent(path: &Path) -> &Path {
    path.parent().unwrap_or(Path::new("/"))
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(suffix);
    PathBuf::from(name)
}

/// Keeps the error's kind and adds what was done to which path, so the log
/// line says which file of which profile failed.
fn with_path(err: io::Error, verb: &str, path: &Path) -> io::Error {
    io::Error::new(
        err.kind(),
        format!("cannot {verb} `{}`: {err}", path.display()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn write(path: &Path, content: &str) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, content).unwrap();
    }

    fn read(path: &Path) -> String {
        fs::read_to_string(path).unwrap()
    }

    #[test]
    fn a_fresh_template_clones_to_an_empty_profile_and_copy_back_creates_it() {
        let home = tempfile::tempdir().unwrap();
        let template = Template::in_home(home.path());
        assert!(!template.dir().exists());

        let user_data = home.path().join("screen-1");
        let clone = template.clone_to(&user_data).unwrap();
        assert_eq!(clone.user_data_dir(), user_data);
        assert_eq!(fs::read_dir(&user_data).unwrap().count(), 0);
        let mode = fs::metadata(&user_data).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);

        write(&user_data.join("Default/Bookmarks"), "{\"a\":1}");
        let zoom = r#"{"partition":{"per_host_zoom_levels":{"x":{"a.test":{"zoom_level":1.5}}}}}"#;
        write(&user_data.join("Default/Preferences"), zoom);
        let copied = template.copy_back(&clone).unwrap();
        assert_eq!(copied, ["Default/Bookmarks", "Default/Preferences"]);
        assert_eq!(
            template.dir(),
            home.path()
                .join(".local/share/computer-use/chromium-template")
        );
        assert_eq!(read(&template.dir().join("Default/Bookmarks")), "{\"a\":1}");
        assert_eq!(read(&template.dir().join("Default/Preferences")), zoom);
        let mode = fs::metadata(template.dir().join("Default/Bookmarks"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn an_unchanged_file_is_not_copied_back_and_a_changed_one_is() {
        let home = tempfile::tempdir().unwrap();
        let template = Template::at(home.path().join("template"));
        write(&template.dir().join("Default/Bookmarks"), "old bookmarks");
        write(&template.dir().join("Default/Login Data"), "passwords");

        let user_data = home.path().join("screen-1");
        let clone = template.clone_to(&user_data).unwrap();
        assert_eq!(read(&user_data.join("Default/Login Data")), "passwords");
        // Rewritten with the same bytes, as Chromium does: still unchanged.
        write(&user_data.join("Default/Login Data"), "passwords");
        write(&user_data.join("Default/Bookmarks"), "new bookmarks");

        assert_eq!(template.copy_back(&clone).unwrap(), ["Default/Bookmarks"]);
        assert_eq!(
            read(&template.dir().join("Default/Bookmarks")),
            "new bookmarks"
        );
    }

    #[test]
    fn an_unchanged_file_does_not_undo_a_change_another_screen_copied_back() {
        let home = tempfile::tempdir().unwrap();
        let template = Template::at(home.path().join("template"));
        write(&template.dir().join("Default/Bookmarks"), "v1");
        let first = template.clone_to(&home.path().join("screen-1")).unwrap();
        let second = template.clone_to(&home.path().join("screen-2")).unwrap();

        write(&first.user_data_dir().join("Default/Bookmarks"), "v2");
        template.copy_back(&first).unwrap();
        // The second Chromium closes later without touching its bookmarks.
        assert!(template.copy_back(&second).unwrap().is_empty());
        assert_eq!(read(&template.dir().join("Default/Bookmarks")), "v2");
    }

    #[test]
    fn when_two_screens_change_bookmarks_the_last_to_close_wins() {
        let home = tempfile::tempdir().unwrap();
        let template = Template::at(home.path().join("template"));
        write(&template.dir().join("Default/Bookmarks"), "v1");
        let first = template.clone_to(&home.path().join("screen-1")).unwrap();
        let second = template.clone_to(&home.path().join("screen-2")).unwrap();
        write(&first.user_data_dir().join("Default/Bookmarks"), "from 1");
        write(&second.user_data_dir().join("Default/Bookmarks"), "from 2");

        template.copy_back(&second).unwrap();
        template.copy_back(&first).unwrap();
        assert_eq!(read(&template.dir().join("Default/Bookmarks")), "from 1");

        // And a clone made now starts from the winner.
        let third = template.clone_to(&home.path().join("screen-3")).unwrap();
        assert_eq!(
            read(&third.user_data_dir().join("Default/Bookmarks")),
            "from 1"
        );
    }

    #[test]
    fn cookies_cache_and_other_files_are_never_copied() {
        let home = tempfile::tempdir().unwrap();
        let template = Template::at(home.path().join("template"));
        // Even when something put them into the template, a clone skips them.
        write(&template.dir().join("Default/Cookies"), "template cookies");
        let user_data = home.path().join("screen-1");
        let clone = template.clone_to(&user_data).unwrap();
        assert!(!user_data.join("Default/Cookies").exists());

        for name in [
            "Default/Cookies",
            "Default/Cookies-journal",
            "Default/Cache/Cache_Data/data_0",
            "Default/History",
            "Default/Secure Preferences",
            "Local State",
        ] {
            write(&user_data.join(name), "chromium's");
        }
        assert!(template.copy_back(&clone).unwrap().is_empty());
        assert_eq!(
            read(&template.dir().join("Default/Cookies")),
            "template cookies"
        );
        assert!(!template.dir().join("Default/Cache").exists());
        assert!(!template.dir().join("Local State").exists());
    }

    /// Chromium's `Preferences` after a page on `https://evil.example` got
    /// the clipboard and registered a `mailto` handler, and the person
    /// zoomed a page to `zoom`.
    fn preferences_after_a_hostile_page(zoom: f64) -> String {
        serde_json::json!({
            "partition": {"per_host_zoom_levels": {"x": {"a.test": {"zoom_level": zoom}}}},
            "profile": {
                "content_settings": {"exceptions": {
                    "clipboard": {"https://evil.example:443,*": {"last_modified": "13370000000000000", "setting": 1}},
                    "notifications": {"https://evil.example:443,*": {"setting": 1}}
                }},
                "exit_type": "Normal"
            },
            "custom_handlers": {"registered_protocol_handlers": [
                {"protocol": "mailto", "url": "https://evil.example/?to=%s"}
            ]},
            "protocol_handler": {"allowed_origin_protocol_pairs": {"https://evil.example": {"ms-word": true}}}
        })
        .to_string()
    }

    #[test]
    fn site_permissions_and_handlers_do_not_reach_the_template_or_the_next_browser() {
        let home = tempfile::tempdir().unwrap();
        let template = Template::at(home.path().join("template"));
        let first = template.clone_to(&home.path().join("screen-1")).unwrap();
        write(
            &first.user_data_dir().join(PREFERENCES),
            &preferences_after_a_hostile_page(1.5),
        );
        assert_eq!(template.copy_back(&first).unwrap(), [PREFERENCES]);

        let kept = read(&template.dir().join(PREFERENCES));
        for leak in [
            "evil.example",
            "content_settings",
            "custom_handlers",
            "protocol_handler",
        ] {
            assert!(!kept.contains(leak), "`{leak}` in the template: {kept}");
        }
        assert!(kept.contains("zoom_level"), "the zoom is kept: {kept}");

        // A template written before this rule still carries them: a clone
        // gets the shared settings only, and the next copy-back cleans it.
        write(
            &template.dir().join(PREFERENCES),
            &preferences_after_a_hostile_page(1.5),
        );
        let second = template.clone_to(&home.path().join("screen-2")).unwrap();
        let cloned = read(&second.user_data_dir().join(PREFERENCES));
        assert!(!cloned.contains("evil.example"), "{cloned}");
        assert!(cloned.contains("zoom_level"), "{cloned}");
        write(
            &second.user_data_dir().join(PREFERENCES),
            &preferences_after_a_hostile_page(2.0),
        );
        assert_eq!(template.copy_back(&second).unwrap(), [PREFERENCES]);
        let kept = read(&template.dir().join(PREFERENCES));
        assert!(!kept.contains("evil.example"), "{kept}");
        assert!(kept.contains("2.0"), "the new zoom wins: {kept}");
    }

    #[test]
    fn preferences_that_are_not_json_are_neither_cloned_nor_copied_back() {
        let home = tempfile::tempdir().unwrap();
        let template = Template::at(home.path().join("template"));
        write(&template.dir().join(PREFERENCES), "{ not json");
        let clone = template.clone_to(&home.path().join("screen-1")).unwrap();
        assert!(!clone.user_data_dir().join(PREFERENCES).exists());
        write(&clone.user_data_dir().join(PREFERENCES), "also { not json");
        assert!(template.copy_back(&clone).unwrap().is_empty());
        assert_eq!(read(&template.dir().join(PREFERENCES)), "{ not json");
    }

    #[test]
    fn clone_empties_a_folder_left_from_an_earlier_chromium() {
        let home = tempfile::tempdir().unwrap();
        let template = Template::at(home.path().join("template"));
        let user_data = home.path().join("screen-1");
        write(&user_data.join("Default/Cookies"), "old session");
        write(&user_data.join("SingletonLock"), "old lock");

        template.clone_to(&user_data).unwrap();
        assert_eq!(fs::read_dir(&user_data).unwrap().count(), 0);
    }

    #[test]
    fn a_file_the_chromium_removed_stays_in_the_template() {
        let home = tempfile::tempdir().unwrap();
        let template = Template::at(home.path().join("template"));
        write(&template.dir().join("Default/Web Data"), "autofill");
        let clone = template.clone_to(&home.path().join("screen-1")).unwrap();
        fs::remove_file(clone.user_data_dir().join("Default/Web Data")).unwrap();

        assert!(template.copy_back(&clone).unwrap().is_empty());
        assert_eq!(read(&template.dir().join("Default/Web Data")), "autofill");
    }

    #[test]
    fn a_stale_journal_in_the_template_goes_when_its_file_is_replaced() {
        let home = tempfile::tempdir().unwrap();
        let template = Template::at(home.path().join("template"));
        write(&template.dir().join("Default/Login Data"), "old db");
        // Left by something that opened the template's database directly.
        write(
            &template.dir().join("Default/Login Data-journal"),
            "old pages",
        );
        write(&template.dir().join("Default/Login Data-wal"), "old frames");
        let clone = template.clone_to(&home.path().join("screen-1")).unwrap();
        // The journal is never cloned: it belongs to the template's file.
        assert!(!clone
            .user_data_dir()
            .join("Default/Login Data-journal")
            .exists());

        write(&clone.user_data_dir().join("Default/Login Data"), "new db");
        // Chromium truncates its journal at commit; an empty one is fine.
        write(
            &clone.user_data_dir().join("Default/Login Data-journal"),
            "",
        );
        assert_eq!(template.copy_back(&clone).unwrap(), ["Default/Login Data"]);
        assert_eq!(read(&template.dir().join("Default/Login Data")), "new db");
        assert!(!template.dir().join("Default/Login Data-journal").exists());
        assert!(!template.dir().join("Default/Login Data-wal").exists());
    }

    #[test]
    fn a_database_with_a_hot_journal_in_the_clone_is_not_copied_back() {
        let home = tempfile::tempdir().unwrap();
        let template = Template::at(home.path().join("template"));
        write(&template.dir().join("Default/Web Data"), "consistent db");
        let clone = template.clone_to(&home.path().join("screen-1")).unwrap();
        write(
            &clone.user_data_dir().join("Default/Web Data"),
            "half written",
        );
        write(
            &clone.user_data_dir().join("Default/Web Data-journal"),
            "pages to roll back",
        );

        assert!(template.copy_back(&clone).unwrap().is_empty());
        assert_eq!(
            read(&template.dir().join("Default/Web Data")),
            "consistent db"
        );
    }

    #[test]
    fn a_symlink_where_a_kept_file_should_be_is_not_followed() {
        let home = tempfile::tempdir().unwrap();
        let template = Template::at(home.path().join("template"));
        let clone = template.clone_to(&home.path().join("screen-1")).unwrap();
        write(&home.path().join("secret"), "not a bookmark");
        fs::create_dir_all(clone.user_data_dir().join("Default")).unwrap();
        std::os::unix::fs::symlink(
            home.path().join("secret"),
            clone.user_data_dir().join("Default/Bookmarks"),
        )
        .unwrap();

        assert!(template.copy_back(&clone).unwrap().is_empty());
        assert!(!template.dir().join("Default/Bookmarks").exists());
    }
}
