//! computerd's settings, from flags and environment variables.
//!
//! Every setting has an environment variable and a flag of the same meaning
//! (`COMPUTERD_HOME` and `--home`); a flag wins over the variable. Bad values are
//! refused at start with a message naming the variable, the value and the allowed
//! range, so a misconfigured computer fails loudly instead of misbehaving later.
//!
//! # Layout
//! - `flags`: the settings as clap reads them, one field per flag and
//!   variable, each value checked on its own (ranges, addresses, durations
//!   through `computer_protocol::duration`, `ScreenSize::parse`).
//! - this file: [`Config`], made from the flags by [`Config::from_flags`],
//!   which checks what spans settings or touches files: the token or the
//!   file holding it (read, then deleted), the home folder, the shell
//!   timeout against its maximum. Also the variables kept from children
//!   ([`daemon_variables`]). Screen sizes are parsed by
//!   [`computer_protocol::ScreenSize`].

mod flags;

use computer_protocol::duration::format_duration;
use computer_protocol::{ScreenSize, Token};
pub use flags::Flags;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

/// The shell timeout when none is set and the maximum allows it.
const STANDARD_SHELL_TIMEOUT: Duration = Duration::from_secs(120);

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("`{name}` is `{value}`: {expected}")]
    Invalid {
        name: &'static str,
        value: String,
        expected: String,
    },
    #[error("`{name}` is not set: {expected}")]
    Missing {
        name: &'static str,
        expected: &'static str,
    },
    /// An unknown flag, a flag without its value, a value out of range, or
    /// `--help` or `--version` asked for: clap's error prints itself (help
    /// and version on stdout) and knows its exit status.
    #[error("{0}")]
    Flags(#[from] clap::Error),
}

/// Everything computerd needs to know at start. Its token is a [`Token`],
/// whose `Debug` hides it, so a log line or panic message may show a config.
#[derive(Clone, Debug)]
pub struct Config {
    /// Where the API listens; `127.0.0.1:7070` natively, `0.0.0.0:7070` in
    /// the container (the Dockerfile sets it), `127.0.0.1:0` in tests (the
    /// bound address is printed).
    pub listen: SocketAddr,
    /// The bearer token every API call but `/health` must carry.
    pub token: Token,
    /// The computer user's home: `~` in paths, where the viewer key lives,
    /// and the first working folder of every session.
    pub home: PathBuf,
    /// Screen N is X display `:display_base + N`. 0 in the container; tests
    /// pick a free range so they never meet a developer's own X server.
    pub display_base: u32,
    /// Screen N serves VNC on `rfb_port_base + N`.
    pub rfb_port_base: u16,
    /// Address Xvnc listens on for VNC: loopback natively, all interfaces in
    /// the container (the Dockerfile sets it; the host publishes the ports on
    /// its own 127.0.0.1).
    pub rfb_interface: String,
    /// Host port of the viewer: the link computerd prints, and the port a
    /// browser's `Host` and `Origin` must name.
    pub port_base: u16,
    /// Where the viewer page and its WebSocket bridge listen; `127.0.0.1:6080`
    /// natively, `0.0.0.0:6080` in the container (the Dockerfile sets it),
    /// `127.0.0.1:0` in tests.
    pub viewer_listen: SocketAddr,
    /// The viewer page's files, with noVNC under `novnc/`.
    pub viewer_dir: PathBuf,
    /// Defaults for sessions whose creator sends no setting of its own.
    pub screen_size: ScreenSize,
    pub idle_timeout: Duration,
    pub shell_timeout: Duration,
    pub shell_timeout_max: Duration,
    /// An owner's sessions end this long after its last heartbeat.
    pub heartbeat_grace: Duration,
    /// Fluxbox configuration folder (`init`, `menu`, ...); Fluxbox's own
    /// defaults when it does not exist.
    pub fluxbox_dir: PathBuf,
    /// Screen N's Chromium serves DevTools on 127.0.0.1 port
    /// `devtools_port_base + N`.
    pub devtools_port_base: u16,
    /// Where the launcher for the screens' menus and `xdg-open` listens;
    /// loopback only, since only programs on the computer use it.
    pub launcher_listen: SocketAddr,
}

/// computerd's own variables (`COMPUTERD_*`): the token, and addresses no
/// child has a use for. They are removed from computerd's environment at
/// start and from every child's, so `printenv` in a shell command, a browser
/// page's crash report or an app's log never shows the token.
pub fn daemon_variables() -> impl Iterator<Item = &'static str> {
    // Every shell command asks; the names are read off the flags once.
    static NAMES: OnceLock<Vec<String>> = OnceLock::new();
    NAMES
        .get_or_init(|| {
            flags::command()
                .get_arguments()
                .filter_map(|arg| arg.get_env()?.to_str().map(str::to_string))
                .filter(|name| name.starts_with("COMPUTERD_"))
                .collect()
        })
        .iter()
        .map(String::as_str)
}

/// Removes [`daemon_variables`] from this process's environment, so no child
/// inherits them. Call it once the settings are read and before any thread
/// starts: changing the environment races with threads that read it.
pub fn remove_daemon_variables_from_environment() {
    for name in daemon_variables() {
        std::env::remove_var(name);
    }
}

/// Reads the token from `path` and deletes the file, so the token is
/// left only in computerd's memory. Whitespace around it is dropped.
fn take_token_file(path: &Path) -> Result<String, ConfigError> {
    let invalid = |why: String| ConfigError::Invalid {
        name: "COMPUTERD_TOKEN_FILE",
        value: path.display().to_string(),
        expected: why,
    };
    let token = std::fs::read_to_string(path).map_err(|e| {
        invalid(format!(
            "could not read it ({e}); give a file holding the API token, or set `COMPUTERD_TOKEN`"
        ))
    })?;
    std::fs::remove_file(path)
        .map_err(|e| invalid(format!("could not delete it after reading ({e}); computerd deletes the token file so nothing else reads it: put it in a folder computerd may write")))?;
    Ok(token.trim().to_string())
}

impl Config {
    /// Reads the process's flags and environment.
    pub fn from_process() -> Result<Config, ConfigError> {
        let flags = Flags::parse_from_args(std::env::args_os())?;
        Config::from_flags(flags, std::env::var_os("HOME").map(PathBuf::from))
    }

    /// Checks what depends on more than one setting or on the file system:
    /// the token (from its file when only that is given), the home folder
    /// (`user_home`, the `HOME` variable, when no setting names one) and the
    /// shell timeout against its maximum.
    pub fn from_flags(flags: Flags, user_home: Option<PathBuf>) -> Result<Config, ConfigError> {
        let from_file = match (&flags.token, &flags.token_file) {
            (None, Some(path)) => Some(take_token_file(path)?),
            _ => None,
        };
        let token = match flags.token.or(from_file) {
            None => {
                return Err(ConfigError::Missing {
                    name: "COMPUTERD_TOKEN",
                    expected:
                        "set it to the API token (16 characters or more) that the host passes",
                })
            }
            Some(t) if t.trim().len() < 16 || t.chars().any(char::is_whitespace) => {
                return Err(ConfigError::Invalid {
                    name: "COMPUTERD_TOKEN",
                    value: "(hidden)".into(),
                    expected: "use 16 or more characters without spaces".into(),
                })
            }
            Some(t) => Token::new(t),
        };
        let home = match flags.home.or(user_home) {
            Some(h) if h.is_absolute() => h,
            Some(h) => {
                return Err(ConfigError::Invalid {
                    name: "COMPUTERD_HOME",
                    value: h.display().to_string(),
                    expected: "use an absolute path to an existing folder".into(),
                })
            }
            None => {
                return Err(ConfigError::Missing {
                    name: "COMPUTERD_HOME",
                    expected: "set it (or HOME) to the computer user's home folder",
                })
            }
        };
        if !home.is_dir() {
            return Err(ConfigError::Invalid {
                name: "COMPUTERD_HOME",
                value: home.display().to_string(),
                expected: "the folder does not exist; create it or point to an existing one".into(),
            });
        }
        let (shell_timeout, shell_timeout_max) =
            shell_timeouts(flags.shell_timeout, flags.shell_timeout_max)?;
        Ok(Config {
            listen: flags.listen,
            token,
            home,
            display_base: flags.display_base,
            rfb_port_base: flags.rfb_port_base,
            rfb_interface: flags.rfb_interface,
            port_base: flags.port_base,
            viewer_listen: flags.viewer_listen,
            viewer_dir: flags.viewer_dir,
            screen_size: flags.screen_size,
            idle_timeout: flags.idle_timeout,
            shell_timeout,
            shell_timeout_max,
            heartbeat_grace: flags.heartbeat_grace,
            fluxbox_dir: flags.fluxbox_dir,
            devtools_port_base: flags.devtools_port_base,
            launcher_listen: flags.launcher_listen,
        })
    }
}

#[cfg(test)]
impl Config {
    /// Every default, with `home` and a token, for the tests of the modules
    /// that read settings; no variable of whoever runs the tests is read.
    pub(crate) fn for_tests(home: &Path) -> Config {
        let args = ["computerd", "--token", "0123456789abcdef"];
        let flags = Flags::from_command(flags::command_without_environment(), args)
            .expect("the defaults parse");
        Config::from_flags(flags, Some(home.to_path_buf())).expect("the defaults hold")
    }
}

/// The default shell timeout follows the maximum when it is unset and the
/// maximum is lower than 120 s; a default above the maximum is refused.
pub fn shell_timeouts(
    default: Option<Duration>,
    max: Duration,
) -> Result<(Duration, Duration), ConfigError> {
    let chosen = default.unwrap_or(STANDARD_SHELL_TIMEOUT.min(max));
    if chosen > max {
        return Err(ConfigError::Invalid {
            name: "COMPUTER_USE_SHELL_TIMEOUT",
            value: format_duration(chosen),
            expected: format!(
                "it must not exceed COMPUTER_USE_SHELL_TIMEOUT_MAX ({}); lower it or raise the maximum",
                format_duration(max)
            ),
        });
    }
    Ok((chosen, max))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "0123456789abcdef";

    /// The flags `args` give, with no environment variable read
    /// (`tests/local/settings.rs` runs computerd with variables of its own).
    fn flags(args: &[&str]) -> Result<Flags, clap::Error> {
        Flags::from_command(
            flags::command_without_environment(),
            std::iter::once("computerd").chain(args.iter().copied()),
        )
    }

    /// The settings `args` give, with a valid token unless they name one
    /// and `/tmp` as the user's home.
    fn config(args: &[&str]) -> Result<Config, ConfigError> {
        let mut all = args.to_vec();
        if !args.iter().any(|a| a.starts_with("--token")) {
            all.extend(["--token", TOKEN]);
        }
        Config::from_flags(flags(&all)?, Some(PathBuf::from("/tmp")))
    }

    fn error_of(args: &[&str]) -> String {
        config(args).unwrap_err().to_string()
    }

    #[test]
    fn defaults() {
        let c = config(&[]).unwrap();
        // Natively everything stays on loopback; the Dockerfile opens the
        // container's interfaces, which the host publishes on its 127.0.0.1.
        assert_eq!(c.listen.to_string(), "127.0.0.1:7070");
        assert_eq!(c.rfb_interface, "127.0.0.1");
        assert_eq!(
            c.screen_size,
            ScreenSize {
                width: 1280,
                height: 800
            }
        );
        assert_eq!(c.idle_timeout, Duration::from_secs(3600));
        assert_eq!(c.shell_timeout, Duration::from_secs(120));
        assert_eq!(c.shell_timeout_max, Duration::from_secs(600));
        assert_eq!(c.heartbeat_grace, Duration::from_secs(30));
        assert_eq!(c.home, PathBuf::from("/tmp"));
        assert_eq!(c.display_base, 0);
        assert_eq!(c.rfb_port_base, 5900);
        assert_eq!(c.port_base, 20900);
        assert_eq!(c.viewer_listen.to_string(), "127.0.0.1:6080");
        assert_eq!(
            c.viewer_dir,
            PathBuf::from("/usr/local/share/computer-use/viewer")
        );
        assert_eq!(
            c.fluxbox_dir,
            PathBuf::from("/usr/local/share/computer-use/fluxbox")
        );
        assert_eq!(c.devtools_port_base, 9221);
        assert_eq!(c.launcher_listen.to_string(), "127.0.0.1:7071");
    }

    /// The names computerd has always had: the image, the host and people's
    /// scripts set them.
    #[test]
    fn every_setting_keeps_its_flag_and_variable() {
        let names: Vec<(String, String)> = flags::command()
            .get_arguments()
            .filter_map(|arg| {
                let env = arg.get_env()?.to_str()?.to_string();
                Some((format!("--{}", arg.get_long()?), env))
            })
            .collect();
        let expected = [
            ("--listen", "COMPUTERD_LISTEN"),
            ("--token", "COMPUTERD_TOKEN"),
            ("--token-file", "COMPUTERD_TOKEN_FILE"),
            ("--home", "COMPUTERD_HOME"),
            ("--display-base", "COMPUTERD_DISPLAY_BASE"),
            ("--rfb-port-base", "COMPUTERD_RFB_PORT_BASE"),
            ("--rfb-interface", "COMPUTERD_RFB_INTERFACE"),
            ("--port-base", "COMPUTER_USE_PORT_BASE"),
            ("--viewer-listen", "COMPUTERD_VIEWER_LISTEN"),
            ("--viewer-dir", "COMPUTERD_VIEWER_DIR"),
            ("--screen-size", "COMPUTER_USE_SCREEN_SIZE"),
            ("--idle-timeout", "COMPUTER_USE_IDLE_TIMEOUT"),
            ("--shell-timeout", "COMPUTER_USE_SHELL_TIMEOUT"),
            ("--shell-timeout-max", "COMPUTER_USE_SHELL_TIMEOUT_MAX"),
            ("--heartbeat-grace", "COMPUTERD_HEARTBEAT_GRACE"),
            ("--fluxbox-dir", "COMPUTERD_FLUXBOX_DIR"),
            ("--devtools-port-base", "COMPUTERD_DEVTOOLS_PORT_BASE"),
            ("--launcher-listen", "COMPUTERD_LAUNCHER_LISTEN"),
        ]
        .map(|(flag, env)| (flag.to_string(), env.to_string()));
        assert_eq!(names, expected);
    }

    #[test]
    fn help_names_every_variable_but_shows_no_value() {
        let help = flags::command().render_long_help().to_string();
        for arg in flags::command().get_arguments() {
            if let Some(env) = arg.get_env() {
                let env = env.to_str().unwrap();
                assert!(help.contains(&format!("[env: {env}]")), "{env}:\n{help}");
            }
        }
        assert!(help.contains("--token <TOKEN>"), "{help}");
    }

    #[test]
    fn viewer_settings() {
        let c = config(&[
            "--viewer-listen",
            "127.0.0.1:0",
            "--viewer-dir",
            "/srv/viewer",
        ])
        .unwrap();
        assert_eq!(c.viewer_listen.to_string(), "127.0.0.1:0");
        assert_eq!(c.viewer_dir, PathBuf::from("/srv/viewer"));
        let e = error_of(&["--viewer-listen", "6080"]);
        assert!(
            e.starts_with(
                "error: `--viewer-listen` is `6080`: use an address and port such as `0.0.0.0:6080`\n"
            ),
            "{e}"
        );
        let e = error_of(&["--viewer-dir", "image/viewer"]);
        assert!(e.contains("--viewer-dir") && e.contains("absolute"), "{e}");
    }

    #[test]
    fn flags_take_a_value_after_a_space_or_an_equals_sign() {
        let c = config(&["--screen-size", "800x600", "--listen=127.0.0.1:0"]).unwrap();
        assert_eq!(
            c.screen_size,
            ScreenSize {
                width: 800,
                height: 600
            }
        );
        assert_eq!(c.listen.to_string(), "127.0.0.1:0");
        let e = error_of(&["--screen-size"]);
        assert!(e.contains("--screen-size") && e.contains("value"), "{e}");
    }

    #[test]
    fn bad_values_name_setting_value_and_range() {
        let e = error_of(&["--screen-size", "100x800"]);
        assert!(
            e.contains("--screen-size") && e.contains("100x800") && e.contains("320 to 7680"),
            "{e}"
        );
        let e = error_of(&["--idle-timeout", "soon"]);
        assert!(
            e.contains("--idle-timeout") && e.contains("soon") && e.contains("`2m`"),
            "{e}"
        );
        let e = error_of(&["--rfb-port-base", "80"]);
        assert!(e.contains("1024 to 65519"), "{e}");
        let e = error_of(&["--display-base", "9001"]);
        assert!(
            e.contains("--display-base") && e.contains("0 to 9000"),
            "{e}"
        );
        let e = error_of(&["--listen", "everywhere"]);
        assert!(e.contains("--listen") && e.contains("everywhere"), "{e}");
        let e = error_of(&["--launcher-listen", "0.0.0.0:7071"]);
        assert!(
            e.contains("--launcher-listen") && e.contains("loopback"),
            "{e}"
        );
        let e = error_of(&["--rfb-interface", "anywhere"]);
        assert!(
            e.contains("--rfb-interface") && e.contains("IP address"),
            "{e}"
        );
        let e = error_of(&["--token", "short"]);
        assert_eq!(
            e,
            "`COMPUTERD_TOKEN` is `(hidden)`: use 16 or more characters without spaces"
        );
        let e = error_of(&["--home", "relative/dir"]);
        assert!(
            e.contains("COMPUTERD_HOME") && e.contains("absolute"),
            "{e}"
        );
        let e = error_of(&["--home", "/nonexistent/computerd-home"]);
        assert!(e.contains("does not exist"), "{e}");
        let e = error_of(&["--bogus"]);
        assert!(e.contains("--bogus"), "{e}");
    }

    #[test]
    fn the_token_is_required() {
        let e = Config::from_flags(flags(&[]).unwrap(), Some(PathBuf::from("/tmp")))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("`COMPUTERD_TOKEN` is not set"), "{e}");
        let e = Config::from_flags(flags(&["--token", TOKEN]).unwrap(), None)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("`COMPUTERD_HOME` is not set"), "{e}");
    }

    #[test]
    fn debug_output_leaves_the_token_out() {
        let shown = format!("{:?}", config(&[]).unwrap());
        assert!(!shown.contains(TOKEN), "{shown}");
        assert!(shown.contains("token: Token(hidden)"), "{shown}");
        assert!(shown.contains("display_base: 0"), "{shown}");
    }

    #[test]
    fn shell_default_follows_a_low_maximum() {
        let c = config(&["--shell-timeout-max", "1m"]).unwrap();
        assert_eq!(c.shell_timeout, Duration::from_secs(60));
        let e = error_of(&["--shell-timeout", "10m", "--shell-timeout-max", "5m"]);
        assert_eq!(
            e,
            "`COMPUTER_USE_SHELL_TIMEOUT` is `10m`: it must not exceed COMPUTER_USE_SHELL_TIMEOUT_MAX (5m); lower it or raise the maximum"
        );
    }

    #[test]
    fn the_token_can_come_from_a_file_that_is_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("token");
        std::fs::write(&file, "0123456789abcdef0123\n").unwrap();
        let path = file.to_str().unwrap();
        let only_file = || {
            Config::from_flags(
                flags(&["--token-file", path]).unwrap(),
                Some(PathBuf::from("/tmp")),
            )
        };
        let c = only_file().unwrap();
        assert_eq!(c.token.expose(), "0123456789abcdef0123");
        assert!(!file.exists(), "the token file is deleted once read");
        let e = only_file().unwrap_err().to_string();
        assert!(
            e.starts_with(&format!(
                "`COMPUTERD_TOKEN_FILE` is `{path}`: could not read it"
            )),
            "{e}"
        );
        let names: Vec<&str> = daemon_variables().collect();
        assert!(names.contains(&"COMPUTERD_TOKEN_FILE"), "{names:?}");
    }

    #[test]
    fn daemon_variables_include_the_token_but_not_shared_settings() {
        let names: Vec<&str> = daemon_variables().collect();
        assert!(names.contains(&"COMPUTERD_TOKEN"), "{names:?}");
        assert!(names.contains(&"COMPUTERD_LISTEN"), "{names:?}");
        assert!(!names.contains(&"COMPUTER_USE_PORT_BASE"), "{names:?}");
    }
}
