//! Turning `launch_app`'s `app` into what to start: the screen's browser or
//! terminal, an installed `.desktop` entry, or a program on `PATH`.

use super::desktop_entry::{installed, DesktopEntry};
use super::error::AppError;
use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The unknown-app error lists at most this many entry ids, so the message
/// stays readable on a computer with hundreds of entries.
const MAX_LISTED: usize = 40;

/// Names that mean the screen's own Chromium, which has the shared logins:
/// starting any other copy would open a second browser without them.
const BROWSER_NAMES: &[&str] = &[
    "browser",
    "chromium",
    "chrome",
    "chromium-browser",
    "google-chrome",
    "x-www-browser",
    "sensible-browser",
];

/// Names that mean the screen's terminal.
const TERMINAL_NAMES: &[&str] = &["terminal", "xterm", "x-terminal-emulator"];

/// What `launch_app` starts or raises.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppSpec {
    /// The screen's Chromium; the executing side owns its profile.
    Browser,
    /// The screen's terminal.
    Terminal,
    /// An installed application.
    Entry(DesktopEntry),
    /// A program found on `PATH`, by its full path.
    Program(PathBuf),
}

/// Resolves `app`, tried in this order: the words for the browser and the
/// terminal (any case), a desktop entry by id (`libreoffice-writer`, with or
/// without `.desktop`) or by `Name` (any case), then a program on
/// `path_var`. Entries whose `TryExec` program is missing do not count.
pub fn resolve(app: &str, dirs: &[PathBuf], path_var: Option<&OsStr>) -> Result<AppSpec, AppError> {
    let app = app.trim();
    if app.is_empty() {
        return Err(AppError::EmptyApp);
    }
    if let Some(spec) = alias(app) {
        return Ok(spec);
    }
    // A path would bypass both the entries and `PATH`; `open_path` and
    // `shell` are the tools for files and for programs by path.
    if app.contains('/') {
        return Err(AppError::AppIsPath {
            app: app.to_string(),
        });
    }
    let entries: Vec<DesktopEntry> = installed(dirs)
        .into_iter()
        .filter(|entry| usable(entry, path_var))
        .collect();
    if let Some(entry) = find_entry(&entries, app) {
        // Chromium's or XTerm's own entry still means the screen's one.
        return Ok(entry_program_alias(entry).unwrap_or_else(|| AppSpec::Entry(entry.clone())));
    }
    if let Some(program) = find_on_path(app, path_var) {
        return Ok(AppSpec::Program(program));
    }
    Err(unknown(app, &entries))
}

/// Checks `launch_app`'s `uri` and returns it trimmed.
pub fn check_uri(uri: &str) -> Result<&str, AppError> {
    let uri = uri.trim();
    if uri.is_empty() {
        return Err(AppError::EmptyUri);
    }
    // The URI becomes one argument of the program; one starting with `-`
    // would be read as an option (Chromium's `--renderer-cmd-prefix=` runs
    // a command).
    if uri.starts_with('-') {
        return Err(AppError::UriIsOption {
            uri: uri.to_string(),
        });
    }
    Ok(uri)
}

/// The window class to look for before starting a second copy: an entry's
/// `StartupWMClass`, else its program's file name; a program's file name.
/// `None` for the browser and the terminal, which the executing side finds
/// by itself.
pub fn window_hint(spec: &AppSpec) -> Option<String> {
    match spec {
        AppSpec::Browser | AppSpec::Terminal => None,
        AppSpec::Entry(entry) => entry
            .wm_class
            .clone()
            .or_else(|| program_of(&entry.command(None)).map(str::to_string)),
        AppSpec::Program(path) => Some(file_name(path)?.to_string()),
    }
}

fn alias(name: &str) -> Option<AppSpec> {
    let name = name.to_ascii_lowercase();
    if BROWSER_NAMES.contains(&name.as_str()) {
        Some(AppSpec::Browser)
    } else if TERMINAL_NAMES.contains(&name.as_str()) {
        Some(AppSpec::Terminal)
    } else {
        None
    }
}

/// An entry that only runs a browser or terminal program, such as
/// Chromium's `Exec=/usr/bin/chromium %U`, as the screen's own one.
fn entry_program_alias(entry: &DesktopEntry) -> Option<AppSpec> {
    match entry.command(None).as_slice() {
        [program] => alias(file_name(Path::new(program))?),
        _ => None,
    }
}

fn find_entry<'a>(entries: &'a [DesktopEntry], app: &str) -> Option<&'a DesktopEntry> {
    let id = app.strip_suffix(".desktop").unwrap_or(app);
    let name = app.to_lowercase();
    entries
        .iter()
        .find(|entry| entry.id.eq_ignore_ascii_case(id))
        .or_else(|| {
            entries
                .iter()
                .find(|entry| entry.name.to_lowercase() == name)
        })
}

/// The spec lets an entry name a program in `TryExec` whose absence means
/// the application is not really installed (a leftover entry).
fn usable(entry: &DesktopEntry, path_var: Option<&OsStr>) -> bool {
    match &entry.try_exec {
        None => true,
        Some(program) if program.contains('/') => is_executable(Path::new(program)),
        Some(program) => find_on_path(program, path_var).is_some(),
    }
}

fn find_on_path(name: &str, path_var: Option<&OsStr>) -> Option<PathBuf> {
    std::env::split_paths(path_var?)
        // An empty or relative `PATH` part would mean computerd's own
        // working folder, which is no place to find programs.
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path)
        .is_ok_and(|metadata| metadata.is_file() && metadata.permissions().mode() & 0o111 != 0)
}

/// The program an argv runs, looking past `env VAR=value`.
fn program_of(argv: &[String]) -> Option<&str> {
    let mut words = argv.iter().map(String::as_str);
    let first = words.next()?;
    let program = if file_name(Path::new(first)) == Some("env") {
        words.find(|word| !word.contains('=') && !word.starts_with('-'))?
    } else {
        first
    };
    file_name(Path::new(program))
}

fn file_name(path: &Path) -> Option<&str> {
    path.file_name()?.to_str()
}

fn unknown(app: &str, entries: &[DesktopEntry]) -> AppError {
    let visible: Vec<&str> = entries
        .iter()
        .filter(|entry| !entry.no_display)
        .map(|entry| entry.id.as_str())
        .collect();
    let listed = visible.len().min(MAX_LISTED);
    let installed = ["browser", "terminal"]
        .into_iter()
        .chain(visible[..listed].iter().copied())
        .map(str::to_string)
        .collect();
    AppError::UnknownApp {
        app: app.to_string(),
        installed,
        more: visible.len() - listed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use computer_protocol::Coded;
    use std::fs;

    struct Computer {
        apps: tempfile::TempDir,
        bin: tempfile::TempDir,
    }

    impl Computer {
        fn new() -> Computer {
            Computer {
                apps: tempfile::tempdir().unwrap(),
                bin: tempfile::tempdir().unwrap(),
            }
        }

        fn entry(&self, id: &str, body: &str) {
            fs::write(
                self.apps.path().join(format!("{id}.desktop")),
                format!("[Desktop Entry]\nType=Application\n{body}\n"),
            )
            .unwrap();
        }

        fn program(&self, name: &str, mode: u32) -> PathBuf {
            let path = self.bin.path().join(name);
            fs::write(&path, "#!/bin/sh\n").unwrap();
            fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
            path
        }

        fn resolve(&self, app: &str) -> Result<AppSpec, AppError> {
            // The empty and relative parts must be skipped, not searched.
            let path_var = format!("::relative:{}", self.bin.path().display());
            resolve(
                app,
                &[self.apps.path().to_path_buf()],
                Some(OsStr::new(&path_var)),
            )
        }

        fn entry_id(&self, app: &str) -> String {
            match self.resolve(app) {
                Ok(AppSpec::Entry(entry)) => entry.id,
                other => panic!("`{app}` resolved to {other:?}"),
            }
        }
    }

    #[test]
    fn browser_and_terminal_words_come_first_in_any_case() {
        let computer = Computer::new();
        computer.entry("browser", "Name=Fake\nExec=fake");
        for app in ["browser", " Chromium ", "CHROME", "x-www-browser"] {
            assert_eq!(computer.resolve(app).unwrap(), AppSpec::Browser, "{app}");
        }
        for app in ["terminal", "XTerm"] {
            assert_eq!(computer.resolve(app).unwrap(), AppSpec::Terminal, "{app}");
        }
    }

    #[test]
    fn entries_match_by_id_or_name() {
        let computer = Computer::new();
        computer.entry(
            "libreoffice-writer",
            "Name=LibreOffice Writer\nExec=libreoffice --writer %U",
        );
        computer.entry(
            "org.gnome.Calculator",
            "Name=Calculator\nExec=gnome-calculator",
        );
        assert_eq!(
            computer.entry_id("libreoffice-writer"),
            "libreoffice-writer"
        );
        assert_eq!(
            computer.entry_id("libreoffice-writer.desktop"),
            "libreoffice-writer"
        );
        assert_eq!(
            computer.entry_id("libreoffice writer"),
            "libreoffice-writer"
        );
        assert_eq!(
            computer.entry_id("org.gnome.calculator"),
            "org.gnome.Calculator"
        );
        assert_eq!(computer.entry_id("CALCULATOR"), "org.gnome.Calculator");
    }

    #[test]
    fn an_entry_that_only_runs_chromium_is_the_screens_browser() {
        let computer = Computer::new();
        computer.entry("chromium-app", "Name=Web\nExec=/usr/bin/chromium %U");
        computer.entry("chromium-kiosk", "Name=Kiosk\nExec=chromium --kiosk %U");
        assert_eq!(computer.resolve("web").unwrap(), AppSpec::Browser);
        assert_eq!(computer.entry_id("kiosk"), "chromium-kiosk");
    }

    #[test]
    fn entries_whose_try_exec_is_missing_do_not_count() {
        let computer = Computer::new();
        computer.entry("ghost", "Name=Ghost\nExec=ghost\nTryExec=ghost");
        computer.entry("real", "Name=Real\nExec=real\nTryExec=real");
        computer.program("real", 0o755);
        assert_eq!(computer.entry_id("real"), "real");
        assert!(matches!(
            computer.resolve("ghost"),
            Err(AppError::UnknownApp { .. })
        ));
    }

    #[test]
    fn programs_are_found_on_path_when_executable() {
        let computer = Computer::new();
        let tool = computer.program("my-tool", 0o755);
        computer.program("not-runnable", 0o644);
        assert_eq!(computer.resolve("my-tool").unwrap(), AppSpec::Program(tool));
        assert!(matches!(
            computer.resolve("not-runnable"),
            Err(AppError::UnknownApp { .. })
        ));
        let no_path = resolve("my-tool", &[], None);
        assert!(matches!(no_path, Err(AppError::UnknownApp { .. })));
    }

    #[test]
    fn paths_and_empty_names_are_refused_naming_the_field() {
        let computer = Computer::new();
        let err = computer.resolve("./run.sh").unwrap_err();
        assert_eq!(
            err.to_string(),
            "`app` `./run.sh` is a path, not an application name: open a file with `open_path`, or run a program by its path with `shell`"
        );
        let err = computer.resolve("  ").unwrap_err();
        assert!(err.to_string().starts_with("`app` is empty"), "{err}");
        assert_eq!(err.code(), computer_protocol::ErrorCode::InvalidInput);
    }

    #[test]
    fn an_unknown_app_lists_the_visible_entries() {
        let computer = Computer::new();
        computer.entry("zed", "Name=Zed\nExec=zed");
        computer.entry("gimp", "Name=GIMP\nExec=gimp %U");
        computer.entry("secret", "Name=Secret\nExec=secret\nNoDisplay=true");
        let err = computer.resolve("photoshop").unwrap_err();
        assert_eq!(err.code(), computer_protocol::ErrorCode::NotFound);
        assert_eq!(
            err.to_string(),
            "no application `photoshop`: it is not `browser` or `terminal`, nor the id or name of an installed `.desktop` entry, nor a program on `PATH`; give one of: browser, terminal, gimp, zed, or a program's name (`shell` can find it with `ls /usr/bin`)"
        );
        // A hidden-from-menus entry still launches by name.
        assert_eq!(computer.entry_id("secret"), "secret");
    }

    #[test]
    fn a_long_list_of_entries_is_cut() {
        let computer = Computer::new();
        for n in 0..45 {
            computer.entry(&format!("app{n:02}"), "Name=A\nExec=a");
        }
        match computer.resolve("nothing").unwrap_err() {
            AppError::UnknownApp {
                installed, more, ..
            } => {
                assert_eq!(installed.len(), 2 + MAX_LISTED);
                assert_eq!(installed[2], "app00");
                assert_eq!(more, 5);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn window_hints_name_the_class_or_the_program() {
        let entry = |wm_class: Option<&str>, argv: &[&str]| {
            AppSpec::Entry(DesktopEntry {
                id: "x".into(),
                name: "X".into(),
                argv: argv.iter().map(|s| s.to_string()).collect(),
                try_exec: None,
                wm_class: wm_class.map(str::to_string),
                terminal: false,
                no_display: false,
            })
        };
        assert_eq!(
            window_hint(&entry(
                Some("libreoffice-writer"),
                &["libreoffice", "--writer"]
            )),
            Some("libreoffice-writer".into())
        );
        assert_eq!(
            window_hint(&entry(None, &["/usr/bin/gimp-2.10", "%U"])),
            Some("gimp-2.10".into())
        );
        assert_eq!(
            window_hint(&entry(
                None,
                &["env", "GDK_BACKEND=x11", "/opt/zed/zed", "%F"]
            )),
            Some("zed".into())
        );
        assert_eq!(
            window_hint(&AppSpec::Program(PathBuf::from("/usr/bin/xclock"))),
            Some("xclock".into())
        );
        assert_eq!(window_hint(&AppSpec::Browser), None);
    }

    #[test]
    fn uris_that_would_be_options_are_refused() {
        assert_eq!(check_uri(" https://a.b/ ").unwrap(), "https://a.b/");
        assert!(matches!(check_uri(" "), Err(AppError::EmptyUri)));
        let err = check_uri("--renderer-cmd-prefix=sh").unwrap_err();
        assert!(err
            .to_string()
            .starts_with("`uri` `--renderer-cmd-prefix=sh` starts with `-`"));
    }
}
