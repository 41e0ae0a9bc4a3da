//! Deciding what `open_path`'s `target` is and what opens it: a web page
//! or a file Chromium shows (HTML, PDF, images, text) goes to the screen's
//! Chromium, anything else to `xdg-open`.

use super::error::AppError;
use crate::files::resolve;
use computer_protocol::archive::{open_regular, OpenError, Symlinks};
use std::fs;
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// A missing-file error lists at most this many entries of the folder.
const MAX_LISTED: usize = 20;

/// Bytes read to tell text from binary when the extension does not say.
const SNIFF_BYTES: u64 = 1024;

/// Extensions Chromium shows by itself, compared in lowercase.
const BROWSER_EXTENSIONS: &[&str] = &[
    "html", "htm", "xhtml", "pdf", "png", "jpg", "jpeg", "gif", "webp", "svg", "bmp", "ico",
    "avif", "txt", "text", "log", "md", "csv", "json", "xml",
];

/// First bytes of the binary formats Chromium shows: PDF, PNG, JPEG, GIF.
const BROWSER_MAGIC: &[&[u8]] = &[
    b"%PDF",
    b"\x89PNG\r\n\x1a\n",
    b"\xFF\xD8\xFF",
    b"GIF87a",
    b"GIF89a",
];

/// What `open_path` opens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenTarget {
    /// An http(s) URL, as given (trimmed).
    Web { url: String },
    /// An existing file or folder, by its absolute path.
    File { path: PathBuf, kind: FileKind },
}

/// Which program opens a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// The screen's Chromium, through [`file_url`].
    Browser,
    /// The file's default application (folders too).
    XdgOpen,
}

/// Classifies `target`: an `http://` or `https://` URL (any case), else a
/// path (`~` is `home`, relative paths start at `cwd`) that must exist.
/// Other schemes are refused, unless a file by that very name exists.
pub fn classify(target: &str, cwd: &Path, home: &Path) -> Result<OpenTarget, AppError> {
    let target = target.trim();
    if target.is_empty() {
        return Err(AppError::EmptyTarget);
    }
    if let Some(scheme) = scheme_of(target).filter(|s| *s == "http" || *s == "https") {
        return web(target, &scheme);
    }
    let path = resolve(home, cwd, target);
    let metadata = match fs::metadata(&path) {
        Ok(metadata) => metadata,
        Err(err)
            if matches!(
                err.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            // Checked only now: `notes:v2.txt` is a fine file name, while
            // `file:///x` or `javascript:` as a file never exists.
            return Err(match scheme_of(target) {
                Some(scheme) => AppError::UnsupportedScheme {
                    target: target.to_string(),
                    scheme,
                },
                None => missing(&path),
            });
        }
        Err(err) => return Err(read_error(&path, err)),
    };
    let kind = if metadata.is_dir() {
        FileKind::XdgOpen
    } else if !metadata.is_file() {
        return Err(AppError::NotRegular { path: shown(&path) });
    } else if has_browser_extension(&path) {
        FileKind::Browser
    } else {
        sniff(&path)?
    };
    Ok(OpenTarget::File { path, kind })
}

/// What the browser opens for `launch_app`'s `uri`: the rule of
/// `open_path` (an http(s) URL, or the path of a file or folder that
/// exists), so `javascript:`, `file:`, `chrome:` or `data:` links, which
/// the launcher also gets from `xdg-open`, never reach Chromium. A path
/// becomes its `file://` URL.
pub fn browser_page(uri: &str, cwd: &Path, home: &Path) -> Result<String, AppError> {
    match classify(uri, cwd, home) {
        Ok(OpenTarget::Web { url }) => Ok(url),
        Ok(OpenTarget::File { path, .. }) => Ok(file_url(&path)),
        Err(AppError::UnsupportedScheme { target, scheme }) => Err(AppError::BrowserUriScheme {
            uri: target,
            scheme,
        }),
        Err(AppError::InvalidUrl { url, reason }) => {
            Err(AppError::InvalidBrowserUri { uri: url, reason })
        }
        Err(other) => Err(other),
    }
}

/// The `file://` URL of an absolute path. Bytes outside the characters a
/// URL path keeps as they are (spaces, `#`, `?`, `%`, non-ASCII) are
/// percent-encoded, so Chromium opens this file and no other.
pub fn file_url(path: &Path) -> String {
    let mut url = String::from("file://");
    for &byte in path.as_os_str().as_bytes() {
        let kept = byte.is_ascii_alphanumeric() || b"/-._~!$&'()*+,;=:@".contains(&byte);
        if kept {
            url.push(byte as char);
        } else {
            url.push_str(&format!("%{byte:02X}"));
        }
    }
    url
}

/// The scheme of `target` in lowercase when it starts like a URL
/// (`letter (letter | digit | + - .)* :`). One letter is not a scheme, so
/// that `C:\x` reads as a (missing) path.
fn scheme_of(target: &str) -> Option<String> {
    let (scheme, _) = target.split_once(':')?;
    let mut chars = scheme.chars();
    let starts_with_letter = chars.next()?.is_ascii_alphabetic();
    let rest_valid = chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    (starts_with_letter && rest_valid && scheme.len() > 1).then(|| scheme.to_ascii_lowercase())
}

/// Checks an http(s) URL as far as opening it needs: `//`, a host, a
/// numeric port, and no blanks. Chromium does the rest.
fn web(url: &str, scheme: &str) -> Result<OpenTarget, AppError> {
    let invalid = |reason| AppError::InvalidUrl {
        url: url.to_string(),
        reason,
    };
    let Some(rest) = url[scheme.len() + 1..].strip_prefix("//") else {
        return Err(invalid("`http:` and `https:` need `//` and a host"));
    };
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(invalid(
            "it holds a space or control character (write a space as `%20`)",
        ));
    }
    // Chromium reads `\` as `/` in http(s) URLs, so it ends the host too.
    let authority = rest.split(['/', '?', '#', '\\']).next().unwrap_or("");
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (host, port) = match host_port.strip_prefix('[') {
        Some(bracketed) => match bracketed.split_once(']') {
            Some((host, after)) => (host, after.strip_prefix(':')),
            None => return Err(invalid("its IPv6 host has no closing `]`")),
        },
        None => match host_port.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (host_port, None),
        },
    };
    if host.is_empty() {
        return Err(invalid("it has no host"));
    }
    let host_valid = host
        .chars()
        .all(|c| c.is_alphanumeric() || "-._:".contains(c) || !c.is_ascii());
    if !host_valid {
        return Err(invalid("its host holds a character no host name has"));
    }
    // An empty port (`http://a:/`) means the default one.
    let port_valid = port.is_none_or(|p| p.is_empty() || p.parse::<u16>().is_ok_and(|n| n > 0));
    if !port_valid {
        return Err(invalid("its port is not a number from 1 to 65535"));
    }
    Ok(OpenTarget::Web {
        url: url.to_string(),
    })
}

fn has_browser_extension(path: &Path) -> bool {
    path.extension()
        .and_then(|ext| ext.to_str())
        .is_some_and(|ext| BROWSER_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()))
}

/// Decides by the first bytes: PDF and the images by their magic, and
/// UTF-8 text (such as `README` or `main.rs`) without NUL bytes, go to
/// the browser.
fn sniff(path: &Path) -> Result<FileKind, AppError> {
    // A pipe swapped in since `metadata` is refused instead of blocking.
    let file = open_regular(path, Symlinks::Follow).map_err(|err| match err {
        OpenError::NotRegular => AppError::NotRegular { path: shown(path) },
        OpenError::Io(err) => read_error(path, err),
    })?;
    let mut prefix = Vec::new();
    file.take(SNIFF_BYTES)
        .read_to_end(&mut prefix)
        .map_err(|err| read_error(path, err))?;
    Ok(if looks_like_browser_content(&prefix) {
        FileKind::Browser
    } else {
        FileKind::XdgOpen
    })
}

fn looks_like_browser_content(prefix: &[u8]) -> bool {
    if BROWSER_MAGIC.iter().any(|magic| prefix.starts_with(magic)) {
        return true;
    }
    if prefix.contains(&0) {
        return false;
    }
    match std::str::from_utf8(prefix) {
        Ok(_) => true,
        // A character cut by the end of the prefix is still text.
        Err(err) => err.error_len().is_none(),
    }
}

/// The error for a missing path: what is missing, in the nearest folder
/// that exists, and some of what that folder holds.
fn missing(path: &Path) -> AppError {
    let folder = path
        .ancestors()
        .skip(1)
        .find(|ancestor| ancestor.is_dir())
        .unwrap_or(Path::new("/"));
    let missing = path.strip_prefix(folder).unwrap_or(path);
    let (entries, more) = match fs::read_dir(folder) {
        Ok(read_dir) => {
            let mut names: Vec<String> = read_dir
                .filter_map(|entry| Some(entry.ok()?.file_name().to_string_lossy().into_owned()))
                .collect();
            // Dot files last: they crowd home, and are rarely what was meant.
            names.sort_by(|a, b| (a.starts_with('.'), a).cmp(&(b.starts_with('.'), b)));
            let more = names.len().saturating_sub(MAX_LISTED);
            names.truncate(MAX_LISTED);
            let marked = names
                .into_iter()
                .map(|name| {
                    if folder.join(&name).is_dir() {
                        format!("{name}/")
                    } else {
                        name
                    }
                })
                .collect();
            (Some(marked), more)
        }
        Err(_) => (None, 0),
    };
    AppError::NotFound {
        missing: shown(missing),
        folder: shown(folder),
        entries,
        more,
    }
}

fn read_error(path: &Path, err: io::Error) -> AppError {
    match err.kind() {
        io::ErrorKind::PermissionDenied => AppError::PermissionDenied { path: shown(path) },
        _ => AppError::Io {
            path: shown(path),
            source: err,
        },
    }
}

fn shown(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use computer_protocol::Coded;
    use std::path::PathBuf;

    fn classify_in(dir: &Path, target: &str) -> Result<OpenTarget, AppError> {
        classify(target, dir, Path::new("/nonexistent-home"))
    }

    fn kind_of(dir: &Path, name: &str, content: &[u8]) -> FileKind {
        let path = dir.join(name);
        fs::write(&path, content).unwrap();
        match classify_in(dir, name).unwrap() {
            OpenTarget::File { path: found, kind } => {
                assert_eq!(found, path);
                kind
            }
            other => panic!("{other:?}"),
        }
    }

    fn url_error(url: &str) -> String {
        match classify_in(Path::new("/"), url) {
            Err(err @ AppError::InvalidUrl { .. }) => err.to_string(),
            other => panic!("`{url}` gave {other:?}"),
        }
    }

    #[test]
    fn http_urls_are_web_pages() {
        for url in [
            "https://example.com",
            "HTTP://Example.com:8080/a?b#c",
            "https://user:pw@example.com/",
            "http://[::1]:9222/json",
            "http://localhost:/",
            "https://bücher.example/",
        ] {
            assert_eq!(
                classify_in(Path::new("/"), &format!(" {url} ")).unwrap(),
                OpenTarget::Web {
                    url: url.to_string()
                }
            );
        }
    }

    #[test]
    fn bad_http_urls_say_what_is_wrong() {
        assert_eq!(
            url_error("https:example.com"),
            "`target` `https:example.com` is not a valid URL: `http:` and `https:` need `//` and a host; give a URL such as `https://example.com/page`"
        );
        assert!(url_error("http://").contains("it has no host"));
        assert!(url_error("http:///etc/passwd").contains("it has no host"));
        assert!(url_error("http://:80/").contains("it has no host"));
        assert!(url_error("http://\\evil.com").contains("it has no host"));
        assert!(url_error("http://a b.com/").contains("space"));
        assert!(url_error("http://a.com:99999/").contains("port"));
        assert!(url_error("http://a.com:x/").contains("port"));
        assert!(url_error("http://a<b.com/").contains("host"));
        assert!(url_error("http://[::1/").contains("`]`"));
    }

    #[test]
    fn other_schemes_are_refused_unless_such_a_file_exists() {
        let dir = tempfile::tempdir().unwrap();
        for target in [
            "file:///etc/passwd",
            "javascript:alert(1)",
            "chrome://settings",
            "view-source:https://a.com",
        ] {
            let err = classify_in(dir.path(), target).unwrap_err();
            assert!(
                matches!(err, AppError::UnsupportedScheme { .. }),
                "{target}: {err:?}"
            );
            assert_eq!(err.code(), computer_protocol::ErrorCode::InvalidInput);
        }
        assert_eq!(
            classify_in(dir.path(), "file:///etc/passwd").unwrap_err().to_string(),
            "`target` `file:///etc/passwd` is a `file:` link, which `open_path` does not open: give the path of a file on the computer (such as `/home/computer/a.pdf`, not `file:///home/computer/a.pdf`) or an `http://` or `https://` URL"
        );
        assert_eq!(kind_of(dir.path(), "notes:v2.txt", b"x"), FileKind::Browser);
    }

    #[test]
    fn the_browser_of_launch_app_takes_web_pages_and_files_only() {
        let dir = tempfile::tempdir().unwrap();
        let page = |uri: &str| browser_page(uri, dir.path(), Path::new("/nonexistent-home"));
        for uri in [
            "javascript:alert(1)",
            "file:///etc/passwd",
            "chrome://settings",
            "data:text/html,<script>alert(1)</script>",
        ] {
            let err = page(uri).unwrap_err();
            assert!(
                matches!(err, AppError::BrowserUriScheme { .. }),
                "{uri}: {err:?}"
            );
            assert!(err
                .to_string()
                .starts_with(&format!("`uri` `{uri}` is a `")));
            assert_eq!(err.code(), computer_protocol::ErrorCode::InvalidInput);
        }
        assert!(page("https:example.com")
            .unwrap_err()
            .to_string()
            .starts_with("`uri` `https:example.com` is not a valid URL"));
        assert_eq!(page("https://a.example/x").unwrap(), "https://a.example/x");
        fs::write(dir.path().join("a b.html"), b"<p>").unwrap();
        assert_eq!(
            page("a b.html").unwrap(),
            file_url(&dir.path().join("a b.html"))
        );
    }

    #[test]
    fn tilde_is_home_and_relative_paths_start_at_cwd() {
        let home = tempfile::tempdir().unwrap();
        let cwd = tempfile::tempdir().unwrap();
        fs::write(home.path().join("a.pdf"), b"%PDF").unwrap();
        fs::write(cwd.path().join("b.txt"), b"b").unwrap();
        let file = |target: &str| match classify(target, cwd.path(), home.path()).unwrap() {
            OpenTarget::File { path, kind } => (path, kind),
            other => panic!("{other:?}"),
        };
        assert_eq!(file("~"), (home.path().to_path_buf(), FileKind::XdgOpen));
        assert_eq!(
            file("~/a.pdf"),
            (home.path().join("a.pdf"), FileKind::Browser)
        );
        assert_eq!(file("b.txt"), (cwd.path().join("b.txt"), FileKind::Browser));
        assert_eq!(
            file("./sub/../b.txt"),
            (cwd.path().join("b.txt"), FileKind::Browser)
        );
        let absolute = home.path().join("a.pdf");
        assert_eq!(file(absolute.to_str().unwrap()).0, absolute);
    }

    #[test]
    fn a_missing_file_lists_the_nearest_folder() {
        let dir = tempfile::tempdir().unwrap();
        let docs = dir.path().join("docs");
        fs::create_dir_all(docs.join("notes")).unwrap();
        fs::write(docs.join("a.pdf"), b"").unwrap();
        fs::write(docs.join(".hidden"), b"").unwrap();
        fs::write(docs.join("B.txt"), b"").unwrap();

        let err = classify_in(dir.path(), "docs/report.pdf").unwrap_err();
        assert_eq!(err.code(), computer_protocol::ErrorCode::NotFound);
        assert_eq!(
            err.to_string(),
            format!(
                "no file or folder `report.pdf` in `{}`, which holds: B.txt, a.pdf, notes/, .hidden; check the name (look around with `list_files`), or give an `https://` URL for a web page",
                docs.display()
            )
        );
        // Deeper: the nearest folder that exists is named.
        let err = classify_in(dir.path(), "docs/x/y/z.pdf").unwrap_err();
        assert!(
            err.to_string().starts_with(&format!(
                "no file or folder `x/y/z.pdf` in `{}`, which holds",
                docs.display()
            )),
            "{err}"
        );
        // A file in the way is a missing folder too.
        let err = classify_in(dir.path(), "docs/a.pdf/inner").unwrap_err();
        assert!(err.to_string().contains("`a.pdf/inner`"), "{err}");
        let empty = dir.path().join("empty");
        fs::create_dir(&empty).unwrap();
        assert!(classify_in(&empty, "x")
            .unwrap_err()
            .to_string()
            .contains("which is empty"));
    }

    #[test]
    fn a_long_folder_is_cut() {
        let dir = tempfile::tempdir().unwrap();
        for n in 0..25 {
            fs::write(dir.path().join(format!("f{n:02}")), b"").unwrap();
        }
        let err = classify_in(dir.path(), "missing").unwrap_err();
        assert!(err.to_string().contains("f19 and 5 more;"), "{err}");
        assert!(!err.to_string().contains("f20"), "{err}");
    }

    #[test]
    fn extensions_choose_the_browser_in_any_case() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "a.HTML", "b.pdf", "c.JPeG", "d.svg", "e.json", "f.xml", "g.log",
        ] {
            // Binary content: the extension alone decides.
            assert_eq!(
                kind_of(dir.path(), name, b"\0\x01\x02"),
                FileKind::Browser,
                "{name}"
            );
        }
    }

    #[test]
    fn without_a_known_extension_the_first_bytes_decide() {
        let dir = tempfile::tempdir().unwrap();
        let kind = |name, bytes| kind_of(dir.path(), name, bytes);
        assert_eq!(kind("scan", b"%PDF-1.7\n\xE2\xE3"), FileKind::Browser);
        assert_eq!(kind("pic", b"\x89PNG\r\n\x1a\n\0\0"), FileKind::Browser);
        assert_eq!(kind("photo.bin", b"\xFF\xD8\xFF\xE0\0"), FileKind::Browser);
        assert_eq!(kind("anim", b"GIF89a\0\0"), FileKind::Browser);
        assert_eq!(
            kind("main.rs", "fn main() {} // é".as_bytes()),
            FileKind::Browser
        );
        assert_eq!(kind("empty", b""), FileKind::Browser);
        assert_eq!(kind("report.docx", b"PK\x03\x04\0\0"), FileKind::XdgOpen);
        assert_eq!(kind("latin1.dat", b"caf\xE9 au lait"), FileKind::XdgOpen);
        assert_eq!(kind("nul.dat", b"text\0more"), FileKind::XdgOpen);
        // A character cut by the end of what is read is still text.
        let mut long = vec![b'a'; SNIFF_BYTES as usize - 1];
        long.extend_from_slice("é".as_bytes());
        assert_eq!(kind("long", &long), FileKind::Browser);
    }

    #[test]
    fn folders_open_with_xdg_open_and_pipes_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("pictures")).unwrap();
        assert_eq!(
            classify_in(dir.path(), "pictures").unwrap(),
            OpenTarget::File {
                path: dir.path().join("pictures"),
                kind: FileKind::XdgOpen
            }
        );
        let fifo = dir.path().join("pipe");
        let c_path = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        let err = classify_in(dir.path(), "pipe").unwrap_err();
        assert!(matches!(err, AppError::NotRegular { .. }), "{err:?}");
    }

    #[test]
    fn empty_targets_name_the_field() {
        let err = classify_in(Path::new("/"), "  ").unwrap_err();
        assert!(err.to_string().starts_with("`target` is empty"), "{err}");
    }

    #[test]
    fn file_urls_encode_what_a_url_path_cannot_hold() {
        assert_eq!(
            file_url(Path::new("/home/computer/a b/#1?x%y/café.pdf")),
            "file:///home/computer/a%20b/%231%3Fx%25y/caf%C3%A9.pdf"
        );
        assert_eq!(
            file_url(Path::new("/tmp/a-b_c.d~e(1)+f,g;h=i@j:k")),
            "file:///tmp/a-b_c.d~e(1)+f,g;h=i@j:k"
        );
        let raw = PathBuf::from(std::ffi::OsStr::from_bytes(b"/tmp/\xFF\"<>"));
        assert_eq!(file_url(&raw), "file:///tmp/%FF%22%3C%3E");
    }
}
