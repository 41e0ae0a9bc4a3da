//! Opening a link in the person's browser.
//!
//! No shell ever reads the link. On Windows that rules out `cmd /C start`:
//! cmd splits a command line at `&` (which every viewer link with
//! `&screen=N` holds) and runs what follows as commands, and Rust does not
//! quote for cmd. The link goes to `ShellExecuteW` instead, which hands it
//! to the default browser as one string.

use crate::child_env::WithoutHostSecrets;
use std::process::{Command, Stdio};

/// Why the person's browser could not be given the link; each says to
/// open the viewer link by hand.
#[derive(Debug, thiserror::Error)]
pub enum OpenUrlError {
    #[error("could not run the browser opener `{program}`: {source}; open the viewer link from start_computer by hand")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    /// `code` is what `ShellExecuteW` gave back, 32 or less.
    #[cfg(windows)]
    #[error("Windows could not open the link (ShellExecuteW error {code}); open the viewer link from start_computer by hand")]
    ShellExecute { code: isize },
    #[cfg(not(windows))]
    #[error("ShellExecuteW exists only on Windows")]
    NoShellExecute,
}

/// How a link is opened on one OS.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Launch {
    /// Run `program` with `args`, each passed as one argument, no shell.
    Program { program: String, args: Vec<String> },
    /// Windows: the shell's "open" verb on the link itself.
    ShellOpen(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Os {
    Mac,
    Windows,
    Other,
}

impl Os {
    fn this() -> Os {
        if cfg!(target_os = "macos") {
            Os::Mac
        } else if cfg!(windows) {
            Os::Windows
        } else {
            Os::Other
        }
    }
}

/// `open` on macOS, `ShellExecuteW` on Windows, and `$BROWSER` (when set
/// and not blank) or `xdg-open` elsewhere.
fn launch_for(os: Os, url: &str, browser: Option<String>) -> Launch {
    match os {
        Os::Mac => Launch::Program {
            program: "open".into(),
            args: vec![url.into()],
        },
        Os::Windows => Launch::ShellOpen(url.into()),
        Os::Other => Launch::Program {
            program: browser
                .filter(|b| !b.trim().is_empty())
                .unwrap_or_else(|| "xdg-open".to_string()),
            args: vec![url.into()],
        },
    }
}

/// Opens `url` with the platform's opener.
pub fn open_url(url: &str) -> Result<(), OpenUrlError> {
    match launch_for(Os::this(), url, std::env::var("BROWSER").ok()) {
        Launch::Program { program, args } => run(&program, &args),
        Launch::ShellOpen(url) => shell_open(&url),
    }
}

/// The opener's command: the link as one argument, no terminal, and none
/// of the host's secrets (the browser it starts keeps that environment).
fn opener_command(program: &str, args: &[String]) -> Command {
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .without_host_secrets();
    command
}

fn run(program: &str, args: &[String]) -> Result<(), OpenUrlError> {
    let mut child =
        opener_command(program, args)
            .spawn()
            .map_err(|source| OpenUrlError::Spawn {
                program: program.to_string(),
                source,
            })?;
    // Reap it without waiting here: opening never delays a tool call.
    std::thread::spawn(move || child.wait());
    Ok(())
}

#[cfg(windows)]
fn shell_open(url: &str) -> Result<(), OpenUrlError> {
    use windows_sys::Win32::UI::Shell::ShellExecuteW;
    use windows_sys::Win32::UI::WindowsAndMessaging::SW_SHOWNORMAL;
    let wide = |text: &str| -> Vec<u16> { text.encode_utf16().chain(Some(0)).collect() };
    let (verb, file) = (wide("open"), wide(url));
    // SAFETY: both strings are NUL-terminated UTF-16 that outlive the call;
    // the null pointers are the documented "none" values.
    let code = unsafe {
        ShellExecuteW(
            std::ptr::null_mut(),
            verb.as_ptr(),
            file.as_ptr(),
            std::ptr::null(),
            std::ptr::null(),
            SW_SHOWNORMAL,
        )
    } as isize;
    // Values above 32 mean success; the rest are error codes.
    if code > 32 {
        Ok(())
    } else {
        Err(OpenUrlError::ShellExecute { code })
    }
}

#[cfg(not(windows))]
fn shell_open(_: &str) -> Result<(), OpenUrlError> {
    Err(OpenUrlError::NoShellExecute)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINK: &str = "http://127.0.0.1:20900/#key=abcdefgh&screen=3";

    #[test]
    fn windows_hands_the_whole_link_to_the_shell_with_no_command_line() {
        assert_eq!(
            launch_for(Os::Windows, LINK, None),
            Launch::ShellOpen(LINK.into())
        );
        // Even a link that cmd would split into commands stays one string.
        let hostile = "http://127.0.0.1:1/#key=x&calc&screen=1";
        assert_eq!(
            launch_for(Os::Windows, hostile, Some("cmd /C".into())),
            Launch::ShellOpen(hostile.into())
        );
    }

    #[test]
    fn the_opener_does_not_inherit_the_http_token() {
        let command = opener_command("xdg-open", &[LINK.into()]);
        let token_removed = command
            .get_envs()
            .any(|(name, value)| name == crate::settings::HTTP_TOKEN && value.is_none());
        assert!(token_removed, "{command:?}");
    }

    #[test]
    fn mac_and_others_pass_the_link_as_one_argument() {
        assert_eq!(
            launch_for(Os::Mac, LINK, Some("firefox".into())),
            Launch::Program {
                program: "open".into(),
                args: vec![LINK.into()]
            }
        );
        assert_eq!(
            launch_for(Os::Other, LINK, Some("firefox".into())),
            Launch::Program {
                program: "firefox".into(),
                args: vec![LINK.into()]
            }
        );
        assert_eq!(
            launch_for(Os::Other, LINK, Some("  ".into())),
            Launch::Program {
                program: "xdg-open".into(),
                args: vec![LINK.into()]
            }
        );
    }
}
