//! Installed applications, read from `.desktop` files: the subset of the
//! freedesktop Desktop Entry spec that launching needs. Only the
//! `[Desktop Entry]` group counts, localised keys (`Name[de]`) are ignored,
//! and `Exec` is split into words by the spec's quoting rules, so no shell
//! ever reads it.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

/// A `.desktop` file bigger than this is not a launcher; skipping it keeps a
/// stray huge file from slowing every `launch_app`.
const MAX_FILE_BYTES: u64 = 1 << 20;

/// Subfolders of an applications folder are scanned this deep, which also
/// ends a symlink loop.
const MAX_DEPTH: usize = 4;

/// One application a `.desktop` file describes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DesktopEntry {
    /// The desktop file id: the file name without `.desktop`, prefixed with
    /// `folder-` for each subfolder (`kde4/foo.desktop` is `kde4-foo`). What
    /// an agent passes as `app` and what the unknown-app error lists.
    pub id: String,
    /// `Name`, the label people see; an agent may pass it as `app` too.
    pub name: String,
    /// `Exec` split into words, field codes such as `%U` still in; see
    /// [`DesktopEntry::command`].
    pub argv: Vec<String>,
    /// `TryExec`: a program that must exist for the entry to be usable.
    pub try_exec: Option<String>,
    /// `StartupWMClass`: the `WM_CLASS` of the application's windows, used
    /// to find a window to raise instead of starting a second copy.
    pub wm_class: Option<String>,
    /// `Terminal=true`: the program needs a terminal to run in.
    pub terminal: bool,
    /// `NoDisplay=true`: launchable, but left out of menus and lists.
    pub no_display: bool,
}

/// Why a `.desktop` file cannot be used; such files are skipped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("no `[Desktop Entry]` group")]
    NoGroup,
    #[error("no `{0}` key")]
    MissingKey(&'static str),
    #[error("`Exec` has an unclosed double quote")]
    UnclosedQuote,
    #[error("`Exec` is empty")]
    EmptyExec,
}

impl DesktopEntry {
    /// The argv to run, with `%u`, `%U`, `%f` and `%F` replaced by `uri`
    /// (or gone without one) and every other field code dropped. A word
    /// that was only field codes and expands to nothing is left out rather
    /// than passed as an empty argument.
    pub fn command(&self, uri: Option<&str>) -> Vec<String> {
        self.argv
            .iter()
            .filter_map(|word| expand(word, uri))
            .collect()
    }

    /// Whether `Exec` has a place for a URI or file; without one, a `uri`
    /// given to [`DesktopEntry::command`] is not passed on.
    pub fn takes_uri(&self) -> bool {
        self.argv.iter().any(|word| {
            let mut chars = word.chars();
            while let Some(c) = chars.next() {
                if c == '%' && matches!(chars.next(), Some('u' | 'U' | 'f' | 'F')) {
                    return true;
                }
            }
            false
        })
    }
}

/// The folders searched, most important first, as XDG orders them: the
/// user's own entries override the system's.
pub fn default_dirs(home: &Path) -> Vec<PathBuf> {
    vec![
        home.join(".local/share/applications"),
        PathBuf::from("/usr/local/share/applications"),
        PathBuf::from("/usr/share/applications"),
    ]
}

/// Every usable entry in `dirs`, sorted by id. For an id found in several
/// folders the first folder wins, even when its file is `Hidden` (that is
/// how a user deletes a system entry); unreadable or unparsable files are
/// skipped as if absent.
pub fn installed(dirs: &[PathBuf]) -> Vec<DesktopEntry> {
    let mut seen = HashSet::new();
    let mut entries = Vec::new();
    for dir in dirs {
        scan(dir, "", 0, &mut seen, &mut entries);
    }
    entries.sort_by(|a, b| a.id.cmp(&b.id));
    entries
}

fn scan(
    dir: &Path,
    prefix: &str,
    depth: usize,
    seen: &mut HashSet<String>,
    entries: &mut Vec<DesktopEntry>,
) {
    let Ok(read_dir) = fs::read_dir(dir) else {
        return;
    };
    let mut names: Vec<_> = read_dir
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .collect();
    // Sorted so that which file wins an id clash inside one folder does not
    // depend on the filesystem's order.
    names.sort();
    for name in names {
        let path = dir.join(&name);
        // `metadata` follows symlinks: entries are often links into a
        // package's own folder.
        let Ok(metadata) = fs::metadata(&path) else {
            continue;
        };
        if metadata.is_dir() {
            if depth < MAX_DEPTH {
                scan(&path, &format!("{prefix}{name}-"), depth + 1, seen, entries);
            }
            continue;
        }
        let Some(stem) = name.strip_suffix(".desktop") else {
            continue;
        };
        let id = format!("{prefix}{stem}");
        if !metadata.is_file() || metadata.len() > MAX_FILE_BYTES || seen.contains(&id) {
            continue;
        }
        let Ok(text) = fs::read_to_string(&path) else {
            continue;
        };
        match parse(&id, &text) {
            Ok(entry) => {
                seen.insert(id);
                entries.extend(entry);
            }
            Err(_) => continue,
        }
    }
}

/// Reads one file's text. `Ok(None)` is a file that exists but launches
/// nothing (`Hidden`, or a `Type` other than `Application`): it still hides
/// entries of the same id in later folders.
pub fn parse(id: &str, text: &str) -> Result<Option<DesktopEntry>, ParseError> {
    let keys = desktop_entry_group(text)?;
    let get = |key: &str| keys.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
    let flag = |key: &str| get(key) == Some("true");

    if flag("Hidden") || get("Type") != Some("Application") {
        return Ok(None);
    }
    let name = get("Name").ok_or(ParseError::MissingKey("Name"))?;
    let exec = get("Exec").ok_or(ParseError::MissingKey("Exec"))?;
    let argv = split_exec(&unescape(exec))?;
    if argv.is_empty() {
        return Err(ParseError::EmptyExec);
    }
    let optional = |key: &str| get(key).map(unescape).filter(|v| !v.is_empty());
    Ok(Some(DesktopEntry {
        id: id.to_string(),
        name: unescape(name),
        argv,
        try_exec: optional("TryExec"),
        wm_class: optional("StartupWMClass"),
        terminal: flag("Terminal"),
        no_display: flag("NoDisplay"),
    }))
}

/// The `key=value` pairs of the `[Desktop Entry]` group, raw, in file order.
fn desktop_entry_group(text: &str) -> Result<Vec<(&str, &str)>, ParseError> {
    let mut found = false;
    let mut inside = false;
    let mut keys = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with('[') {
            inside = line == "[Desktop Entry]";
            found |= inside;
            continue;
        }
        if let Some((key, value)) = line.split_once('=').filter(|_| inside) {
            keys.push((key.trim(), value.trim()));
        }
    }
    if found {
        Ok(keys)
    } else {
        Err(ParseError::NoGroup)
    }
}

/// The spec's escapes for string values: `\s`, `\n`, `\t`, `\r`, `\\`.
/// Any other backslash is kept, so `Exec`'s own quoting (applied after
/// this) still sees it; many files write `\"` where the spec wants `\\"`.
fn unescape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('s') => out.push(' '),
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('\\') => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// Splits `Exec` into words: blanks separate words, double quotes group
/// them, and inside quotes a backslash escapes `"`, `` ` ``, `$` and `\`.
/// Outside quotes every other character is taken as written.
fn split_exec(exec: &str) -> Result<Vec<String>, ParseError> {
    let mut words = Vec::new();
    let mut word = String::new();
    // Tracked apart from `word`, so that `""` is an empty word, not none.
    let mut in_word = false;
    let mut quoted = false;
    let mut chars = exec.chars();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') => quoted = false,
            (true, '\\') => match chars.next() {
                Some(escaped @ ('"' | '`' | '$' | '\\')) => word.push(escaped),
                Some(other) => {
                    word.push('\\');
                    word.push(other);
                }
                None => return Err(ParseError::UnclosedQuote),
            },
            (true, _) => word.push(c),
            (false, ' ' | '\t' | '\n') => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (false, '"') => {
                quoted = true;
                in_word = true;
            }
            (false, _) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if quoted {
        return Err(ParseError::UnclosedQuote);
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

/// One word with its field codes expanded; `None` when the word was only
/// field codes that expanded to nothing.
fn expand(word: &str, uri: Option<&str>) -> Option<String> {
    let mut out = String::with_capacity(word.len());
    let mut had_code = false;
    let mut chars = word.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('%') => out.push('%'),
            Some('u' | 'U' | 'f' | 'F') => {
                had_code = true;
                out.push_str(uri.unwrap_or(""));
            }
            // `%i` (icon), `%c` (name), `%k` (file location) and the
            // deprecated `%d %D %n %N %v %m`: nothing we launch needs them.
            Some(_) => had_code = true,
            // A lone `%` at the end is not a code; keep it as written.
            None => out.push('%'),
        }
    }
    if had_code && out.is_empty() {
        None
    } else {
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(text: &str) -> DesktopEntry {
        parse("test", text).unwrap().unwrap()
    }

    fn app(exec: &str) -> DesktopEntry {
        entry(&format!(
            "[Desktop Entry]\nType=Application\nName=Test\nExec={exec}\n"
        ))
    }

    fn write(dir: &Path, file: &str, text: &str) {
        let path = dir.join(file);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    fn desktop(name: &str, exec: &str) -> String {
        format!("[Desktop Entry]\nType=Application\nName={name}\nExec={exec}\n")
    }

    #[test]
    fn reads_the_keys_that_matter_from_the_desktop_entry_group_only() {
        let e = entry(
            "# comment\n[Desktop Entry]\nType = Application\nName=LibreOffice Writer\n\
             Name[de]=Schreiben\nExec=libreoffice --writer %U\nTryExec=libreoffice\n\
             StartupWMClass=libreoffice-writer\nTerminal=false\nNoDisplay=true\n\
             [Desktop Action new]\nName=New\nExec=other\nTerminal=true\n",
        );
        assert_eq!(e.id, "test");
        assert_eq!(e.name, "LibreOffice Writer");
        assert_eq!(e.argv, ["libreoffice", "--writer", "%U"]);
        assert_eq!(e.try_exec.as_deref(), Some("libreoffice"));
        assert_eq!(e.wm_class.as_deref(), Some("libreoffice-writer"));
        assert!(!e.terminal);
        assert!(e.no_display);
    }

    #[test]
    fn hidden_and_non_applications_launch_nothing_and_broken_files_are_errors() {
        let hidden = "[Desktop Entry]\nType=Application\nName=A\nExec=a\nHidden=true\n";
        assert_eq!(parse("a", hidden), Ok(None));
        assert_eq!(parse("a", "[Desktop Entry]\nType=Link\nName=A\n"), Ok(None));
        assert_eq!(parse("a", "Type=Application\n"), Err(ParseError::NoGroup));
        assert_eq!(
            parse("a", "[Desktop Entry]\nType=Application\nExec=a\n"),
            Err(ParseError::MissingKey("Name"))
        );
        assert_eq!(
            parse("a", "[Desktop Entry]\nType=Application\nName=A\n"),
            Err(ParseError::MissingKey("Exec"))
        );
        assert_eq!(
            parse("a", &desktop("A", "a \"b")),
            Err(ParseError::UnclosedQuote)
        );
        assert_eq!(parse("a", &desktop("A", "  ")), Err(ParseError::EmptyExec));
    }

    #[test]
    fn exec_follows_the_quoting_rules() {
        assert_eq!(app("a  b\tc").argv, ["a", "b", "c"]);
        assert_eq!(
            app(r#""/opt/My App/run" --title "two words""#).argv,
            ["/opt/My App/run", "--title", "two words"]
        );
        assert_eq!(app(r#"a "" b"#).argv, ["a", "", "b"]);
        assert_eq!(app(r#"a --x="1 2"y"#).argv, ["a", "--x=1 2y"]);
        // `\\"` in the file is `\"` after string unescaping, then `"`;
        // `\"` written directly is kept by the first pass and works too.
        assert_eq!(
            app(r#"sh -c "echo \\"hi\\"""#).argv,
            ["sh", "-c", r#"echo "hi""#]
        );
        assert_eq!(
            app(r#"sh -c "echo \"hi\"""#).argv,
            ["sh", "-c", r#"echo "hi""#]
        );
        assert_eq!(
            app(r#"sh -c "echo \\$HOME \\`x\\` \\\\""#).argv,
            ["sh", "-c", r"echo $HOME `x` \"]
        );
        // `\s` is the string escape for a space, which then splits words.
        assert_eq!(app(r"a\sb").argv, ["a", "b"]);
    }

    #[test]
    fn field_codes_take_the_uri_or_vanish() {
        let e = app("viewer --open=%u %U %f %F %i %c %k %d %% 100%");
        assert_eq!(
            e.command(Some("/tmp/a b.pdf")),
            [
                "viewer",
                "--open=/tmp/a b.pdf",
                "/tmp/a b.pdf",
                "/tmp/a b.pdf",
                "/tmp/a b.pdf",
                "%",
                "100%"
            ]
        );
        assert_eq!(e.command(None), ["viewer", "--open=", "%", "100%"]);
        assert!(e.takes_uri());
        assert!(!app("xclock %i %%u").takes_uri());
        assert_eq!(app("xclock %i %%u").command(Some("x")), ["xclock", "%u"]);
    }

    #[test]
    fn the_first_folder_wins_an_id_even_when_it_hides_the_entry() {
        let user = tempfile::tempdir().unwrap();
        let system = tempfile::tempdir().unwrap();
        write(
            user.path(),
            "editor.desktop",
            &desktop("My Editor", "my-editor"),
        );
        write(
            system.path(),
            "editor.desktop",
            &desktop("Editor", "editor"),
        );
        let hidden = "[Desktop Entry]\nType=Application\nName=G\nExec=g\nHidden=true\n";
        write(user.path(), "game.desktop", hidden);
        write(system.path(), "game.desktop", &desktop("Game", "game"));
        // A broken user file does not hide the system's.
        write(user.path(), "paint.desktop", "not a desktop file");
        write(system.path(), "paint.desktop", &desktop("Paint", "paint"));
        write(
            system.path(),
            "kde4/konsole.desktop",
            &desktop("Konsole", "konsole"),
        );
        write(system.path(), "readme.txt", &desktop("Not", "an entry"));

        let dirs = [user.path().to_path_buf(), system.path().to_path_buf()];
        let found: Vec<_> = installed(&dirs)
            .into_iter()
            .map(|e| (e.id, e.name))
            .collect();
        assert_eq!(
            found,
            [
                ("editor".to_string(), "My Editor".to_string()),
                ("kde4-konsole".to_string(), "Konsole".to_string()),
                ("paint".to_string(), "Paint".to_string()),
            ]
        );
    }

    #[test]
    fn default_dirs_put_the_users_entries_first() {
        assert_eq!(
            default_dirs(Path::new("/home/computer")),
            [
                PathBuf::from("/home/computer/.local/share/applications"),
                PathBuf::from("/usr/local/share/applications"),
                PathBuf::from("/usr/share/applications"),
            ]
        );
    }
}
