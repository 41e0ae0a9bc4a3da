//! computerd's settings, from flags and environment variables.
//!
//! Every setting has an environment variable and a flag of the same meaning
//! (`COMPUTERD_HOME` and `--home`); a flag wins over the variable. Bad values are
//! refused at start with a message naming the variable, the value and the allowed
//! range, so a misconfigured computer fails loudly instead of misbehaving later.

use computer_protocol::duration::{format_duration, parse_duration};
use computer_protocol::limits::{SCREEN_SIDE_MAX, SCREEN_SIDE_MIN};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
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
    #[error("unknown flag `{0}`; run `computerd --help` for the list")]
    UnknownFlag(String),
    #[error("flag `{0}` needs a value")]
    FlagWithoutValue(String),
}

/// A screen size in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScreenSize {
    pub width: u32,
    pub height: u32,
}

/// A screen size that is not `<width>x<height>` with sides in range; its
/// text says what to give instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("use `<width>x<height>` with sides from {SCREEN_SIDE_MIN} to {SCREEN_SIDE_MAX}, such as `1280x800`")]
pub struct BadScreenSize;

impl ScreenSize {
    /// Parses `<width>x<height>` with both sides from 320 to 7680.
    pub fn parse(text: &str) -> Result<ScreenSize, BadScreenSize> {
        let (w, h) = text.trim().split_once(['x', 'X']).ok_or(BadScreenSize)?;
        let side = |s: &str| {
            s.trim()
                .parse::<u32>()
                .ok()
                .filter(|v| (SCREEN_SIDE_MIN..=SCREEN_SIDE_MAX).contains(v))
                .ok_or(BadScreenSize)
        };
        Ok(ScreenSize {
            width: side(w)?,
            height: side(h)?,
        })
    }
}

impl std::fmt::Display for ScreenSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}x{}", self.width, self.height)
    }
}

/// Everything computerd needs to know at start.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where the API listens; `127.0.0.1:7070` natively, `0.0.0.0:7070` in
    /// the container (the Dockerfile sets it), `127.0.0.1:0` in tests (the
    /// bound address is printed).
    pub listen: SocketAddr,
    /// The bearer token every API call but `/health` must carry.
    pub token: String,
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

/// One setting: its variable, its flag, and a line for `--help`.
struct Setting {
    env: &'static str,
    flag: &'static str,
    help: &'static str,
}

const SETTINGS: &[Setting] = &[
    Setting {
        env: "COMPUTERD_LISTEN",
        flag: "--listen",
        help: "API address (default 127.0.0.1:7070; the image sets 0.0.0.0:7070)",
    },
    Setting {
        env: "COMPUTERD_TOKEN",
        flag: "--token",
        help: "bearer token of the API (required, 16 characters or more)",
    },
    Setting {
        env: "COMPUTERD_TOKEN_FILE",
        flag: "--token-file",
        help: "a file holding the token instead, read and deleted at start (the image's entrypoint writes it, so no process's environment shows the token)",
    },
    Setting {
        env: "COMPUTERD_HOME",
        flag: "--home",
        help: "home folder (default $HOME)",
    },
    Setting {
        env: "COMPUTERD_DISPLAY_BASE",
        flag: "--display-base",
        help: "screen N is X display :BASE+N (default 0, up to 9000)",
    },
    Setting {
        env: "COMPUTERD_RFB_PORT_BASE",
        flag: "--rfb-port-base",
        help: "screen N serves VNC on port BASE+N (default 5900)",
    },
    Setting {
        env: "COMPUTERD_RFB_INTERFACE",
        flag: "--rfb-interface",
        help: "address Xvnc listens on for VNC (default 127.0.0.1; the image sets 0.0.0.0)",
    },
    Setting {
        env: "COMPUTER_USE_PORT_BASE",
        flag: "--port-base",
        help: "host port of the viewer: the printed link and the port browsers must use (default 20900)",
    },
    Setting {
        env: "COMPUTERD_VIEWER_LISTEN",
        flag: "--viewer-listen",
        help: "viewer page and WebSocket address (default 127.0.0.1:6080; the image sets 0.0.0.0:6080)",
    },
    Setting {
        env: "COMPUTERD_VIEWER_DIR",
        flag: "--viewer-dir",
        help: "viewer page files, noVNC in novnc/ (default /usr/local/share/computer-use/viewer)",
    },
    Setting {
        env: "COMPUTER_USE_SCREEN_SIZE",
        flag: "--screen-size",
        help: "default screen size (default 1280x800)",
    },
    Setting {
        env: "COMPUTER_USE_IDLE_TIMEOUT",
        flag: "--idle-timeout",
        help: "default idle timeout of a session (default 1h)",
    },
    Setting {
        env: "COMPUTER_USE_SHELL_TIMEOUT",
        flag: "--shell-timeout",
        help: "default shell timeout (default 120)",
    },
    Setting {
        env: "COMPUTER_USE_SHELL_TIMEOUT_MAX",
        flag: "--shell-timeout-max",
        help: "longest shell timeout (default 600)",
    },
    Setting {
        env: "COMPUTERD_HEARTBEAT_GRACE",
        flag: "--heartbeat-grace",
        help: "sessions end this long after their owner's last heartbeat (default 30s)",
    },
    Setting {
        env: "COMPUTERD_FLUXBOX_DIR",
        flag: "--fluxbox-dir",
        help: "Fluxbox configuration folder (default /usr/local/share/computer-use/fluxbox)",
    },
    Setting {
        env: "COMPUTERD_DEVTOOLS_PORT_BASE",
        flag: "--devtools-port-base",
        help: "screen N's Chromium serves DevTools on 127.0.0.1:BASE+N (default 9221)",
    },
    Setting {
        env: "COMPUTERD_LAUNCHER_LISTEN",
        flag: "--launcher-listen",
        help: "launcher for the screens' menus and xdg-open, loopback only (default 127.0.0.1:7071)",
    },
];

/// computerd's own variables (`COMPUTERD_*`): the token, and addresses no
/// child has a use for. They are removed from computerd's environment at
/// start and from every child's, so `printenv` in a shell command, a browser
/// page's crash report or an app's log never shows the token.
pub fn daemon_variables() -> impl Iterator<Item = &'static str> {
    SETTINGS
        .iter()
        .map(|s| s.env)
        .filter(|name| name.starts_with("COMPUTERD_"))
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

/// The `--help` text.
pub fn help() -> String {
    let mut out = String::from(
        "computerd: the daemon inside the computer\n\nEvery flag has an environment variable; the flag wins.\n\n",
    );
    for s in SETTINGS {
        out.push_str(&format!("  {:<22} {:<32} {}\n", s.flag, s.env, s.help));
    }
    out
}

impl Config {
    /// Reads the process's flags and environment.
    pub fn from_process() -> Result<Config, ConfigError> {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let env: HashMap<String, String> = std::env::vars().collect();
        Config::from_sources(&args, &env)
    }

    /// Reads settings from flags (`--name value` or `--name=value`) over
    /// environment variables.
    pub fn from_sources(
        args: &[String],
        env: &HashMap<String, String>,
    ) -> Result<Config, ConfigError> {
        let mut values: HashMap<&'static str, String> = HashMap::new();
        for s in SETTINGS {
            if let Some(v) = env.get(s.env) {
                values.insert(s.env, v.clone());
            }
        }
        let mut iter = args.iter();
        while let Some(arg) = iter.next() {
            let (flag, inline) = match arg.split_once('=') {
                Some((f, v)) => (f, Some(v.to_string())),
                None => (arg.as_str(), None),
            };
            let setting = SETTINGS
                .iter()
                .find(|s| s.flag == flag)
                .ok_or_else(|| ConfigError::UnknownFlag(arg.clone()))?;
            let value = match inline {
                Some(v) => v,
                None => iter
                    .next()
                    .cloned()
                    .ok_or_else(|| ConfigError::FlagWithoutValue(flag.to_string()))?,
            };
            values.insert(setting.env, value);
        }
        let get = |name: &'static str| values.get(name).map(|v| v.as_str());

        let listen = parse_with(
            get("COMPUTERD_LISTEN"),
            "127.0.0.1:7070",
            "COMPUTERD_LISTEN",
            |v| {
                v.parse::<SocketAddr>()
                    .map_err(|_| "use an address and port such as `0.0.0.0:7070`".to_string())
            },
        )?;
        let from_file = match (get("COMPUTERD_TOKEN"), get("COMPUTERD_TOKEN_FILE")) {
            (None, Some(path)) => Some(take_token_file(Path::new(path))?),
            _ => None,
        };
        let token = match get("COMPUTERD_TOKEN").or(from_file.as_deref()) {
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
            Some(t) => t.to_string(),
        };
        let home = match get("COMPUTERD_HOME").or_else(|| env.get("HOME").map(|s| s.as_str())) {
            Some(h) if PathBuf::from(h).is_absolute() => PathBuf::from(h),
            Some(h) => {
                return Err(ConfigError::Invalid {
                    name: "COMPUTERD_HOME",
                    value: h.to_string(),
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
        let display_base = parse_with(
            get("COMPUTERD_DISPLAY_BASE"),
            "0",
            "COMPUTERD_DISPLAY_BASE",
            |v| {
                v.parse::<u32>()
                    .ok()
                    .filter(|n| *n <= 9000)
                    .ok_or_else(|| "use a whole number from 0 to 9000".to_string())
            },
        )?;
        // The first of a block of 16 ports above the privileged range.
        let port_base_of = |v: &str| {
            v.parse::<u16>()
                .ok()
                .filter(|n| (1024..=65519).contains(n))
                .ok_or_else(|| "use a port from 1024 to 65519".to_string())
        };
        let rfb_port_base = parse_with(
            get("COMPUTERD_RFB_PORT_BASE"),
            "5900",
            "COMPUTERD_RFB_PORT_BASE",
            port_base_of,
        )?;
        let rfb_interface = parse_with(
            get("COMPUTERD_RFB_INTERFACE"),
            "127.0.0.1",
            "COMPUTERD_RFB_INTERFACE",
            |v| {
                v.parse::<std::net::IpAddr>()
                    .map(|_| v.to_string())
                    .map_err(|_| "use an IP address such as `127.0.0.1` or `0.0.0.0`".to_string())
            },
        )?;
        let port_base = parse_with(
            get("COMPUTER_USE_PORT_BASE"),
            "20900",
            "COMPUTER_USE_PORT_BASE",
            port_base_of,
        )?;
        let viewer_listen = parse_with(
            get("COMPUTERD_VIEWER_LISTEN"),
            "127.0.0.1:6080",
            "COMPUTERD_VIEWER_LISTEN",
            |v| {
                v.parse::<SocketAddr>()
                    .map_err(|_| "use an address and port such as `0.0.0.0:6080`".to_string())
            },
        )?;
        let viewer_dir = match get("COMPUTERD_VIEWER_DIR") {
            None => PathBuf::from("/usr/local/share/computer-use/viewer"),
            Some(d) if PathBuf::from(d).is_absolute() => PathBuf::from(d),
            Some(d) => {
                return Err(ConfigError::Invalid {
                    name: "COMPUTERD_VIEWER_DIR",
                    value: d.to_string(),
                    expected: "use an absolute path to the folder holding the viewer's index.html"
                        .into(),
                })
            }
        };
        let screen_size = parse_with(
            get("COMPUTER_USE_SCREEN_SIZE"),
            "1280x800",
            "COMPUTER_USE_SCREEN_SIZE",
            ScreenSize::parse,
        )?;
        let idle_timeout = parse_with(
            get("COMPUTER_USE_IDLE_TIMEOUT"),
            "1h",
            "COMPUTER_USE_IDLE_TIMEOUT",
            parse_duration,
        )?;
        let shell_timeout_max = parse_with(
            get("COMPUTER_USE_SHELL_TIMEOUT_MAX"),
            "600",
            "COMPUTER_USE_SHELL_TIMEOUT_MAX",
            parse_duration,
        )?;
        let (shell_timeout, shell_timeout_max) =
            shell_timeouts(get("COMPUTER_USE_SHELL_TIMEOUT"), shell_timeout_max)?;
        let heartbeat_grace = parse_with(
            get("COMPUTERD_HEARTBEAT_GRACE"),
            "30s",
            "COMPUTERD_HEARTBEAT_GRACE",
            parse_duration,
        )?;
        let fluxbox_dir = PathBuf::from(
            get("COMPUTERD_FLUXBOX_DIR").unwrap_or("/usr/local/share/computer-use/fluxbox"),
        );
        let devtools_port_base = parse_with(
            get("COMPUTERD_DEVTOOLS_PORT_BASE"),
            "9221",
            "COMPUTERD_DEVTOOLS_PORT_BASE",
            port_base_of,
        )?;
        let launcher_listen = parse_with(
            get("COMPUTERD_LAUNCHER_LISTEN"),
            "127.0.0.1:7071",
            "COMPUTERD_LAUNCHER_LISTEN",
            |v| {
                v.parse::<SocketAddr>()
                    .ok()
                    .filter(|a| a.ip().is_loopback())
                    .ok_or_else(|| "use a loopback address and port such as `127.0.0.1:7071`: only programs on the computer may open apps".to_string())
            },
        )?;
        Ok(Config {
            devtools_port_base,
            launcher_listen,
            listen,
            token,
            home,
            display_base,
            rfb_port_base,
            rfb_interface,
            port_base,
            viewer_listen,
            viewer_dir,
            screen_size,
            idle_timeout,
            shell_timeout,
            shell_timeout_max,
            heartbeat_grace,
            fluxbox_dir,
        })
    }
}

/// The default shell timeout follows the maximum when it is unset and the
/// maximum is lower than 120 s; a default above the maximum is refused.
pub fn shell_timeouts(
    default: Option<&str>,
    max: Duration,
) -> Result<(Duration, Duration), ConfigError> {
    let standard = Duration::from_secs(120);
    let chosen = match default {
        None => standard.min(max),
        Some(v) => parse_duration(v).map_err(|e| ConfigError::Invalid {
            name: "COMPUTER_USE_SHELL_TIMEOUT",
            value: v.to_string(),
            expected: e.to_string(),
        })?,
    };
    if chosen > max {
        return Err(ConfigError::Invalid {
            name: "COMPUTER_USE_SHELL_TIMEOUT",
            value: default.unwrap_or("120").to_string(),
            expected: format!(
                "it must not exceed COMPUTER_USE_SHELL_TIMEOUT_MAX ({}); lower it or raise the maximum",
                format_duration(max)
            ),
        });
    }
    Ok((chosen, max))
}

/// The setting `name` (its `default` when unset) read by `parse`, whose
/// error says what the value should look like.
fn parse_with<T, E: std::fmt::Display>(
    value: Option<&str>,
    default: &str,
    name: &'static str,
    parse: impl Fn(&str) -> Result<T, E>,
) -> Result<T, ConfigError> {
    let text = value.unwrap_or(default);
    parse(text).map_err(|expected| ConfigError::Invalid {
        name,
        value: text.to_string(),
        expected: expected.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        let mut map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        map.entry("COMPUTERD_TOKEN".into())
            .or_insert_with(|| "0123456789abcdef".into());
        map.entry("HOME".into()).or_insert_with(|| "/tmp".into());
        map
    }

    fn error_of(pairs: &[(&str, &str)]) -> String {
        Config::from_sources(&[], &env(pairs))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn defaults() {
        let c = Config::from_sources(&[], &env(&[])).unwrap();
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
        assert_eq!(c.port_base, 20900);
        assert_eq!(c.viewer_listen.to_string(), "127.0.0.1:6080");
        assert_eq!(
            c.viewer_dir,
            PathBuf::from("/usr/local/share/computer-use/viewer")
        );
    }

    #[test]
    fn viewer_settings() {
        let args: Vec<String> = ["--viewer-listen", "127.0.0.1:0"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let c =
            Config::from_sources(&args, &env(&[("COMPUTERD_VIEWER_DIR", "/srv/viewer")])).unwrap();
        assert_eq!(c.viewer_listen.to_string(), "127.0.0.1:0");
        assert_eq!(c.viewer_dir, PathBuf::from("/srv/viewer"));
        let e = error_of(&[("COMPUTERD_VIEWER_LISTEN", "6080")]);
        assert_eq!(
            e,
            "`COMPUTERD_VIEWER_LISTEN` is `6080`: use an address and port such as `0.0.0.0:6080`"
        );
        let e = error_of(&[("COMPUTERD_VIEWER_DIR", "image/viewer")]);
        assert!(
            e.contains("COMPUTERD_VIEWER_DIR") && e.contains("absolute"),
            "{e}"
        );
    }

    #[test]
    fn flags_win_over_environment() {
        let args: Vec<String> = ["--screen-size", "800x600", "--listen=127.0.0.1:0"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let c =
            Config::from_sources(&args, &env(&[("COMPUTER_USE_SCREEN_SIZE", "1024x768")])).unwrap();
        assert_eq!(
            c.screen_size,
            ScreenSize {
                width: 800,
                height: 600
            }
        );
        assert_eq!(c.listen.to_string(), "127.0.0.1:0");
    }

    #[test]
    fn bad_values_name_variable_value_and_range() {
        let e = error_of(&[("COMPUTER_USE_SCREEN_SIZE", "100x800")]);
        assert!(
            e.contains("COMPUTER_USE_SCREEN_SIZE")
                && e.contains("100x800")
                && e.contains("320 to 7680"),
            "{e}"
        );
        let e = error_of(&[("COMPUTER_USE_IDLE_TIMEOUT", "soon")]);
        assert!(
            e.contains("COMPUTER_USE_IDLE_TIMEOUT") && e.contains("soon") && e.contains("`2m`"),
            "{e}"
        );
        let e = error_of(&[("COMPUTERD_RFB_PORT_BASE", "80")]);
        assert!(e.contains("1024 to 65519"), "{e}");
        let e = error_of(&[("COMPUTERD_DISPLAY_BASE", "-1")]);
        assert!(
            e.contains("COMPUTERD_DISPLAY_BASE") && e.contains("0 to 9000"),
            "{e}"
        );
        let e = error_of(&[("COMPUTERD_LISTEN", "everywhere")]);
        assert!(e.contains("COMPUTERD_LISTEN"), "{e}");
        let e = error_of(&[("COMPUTERD_TOKEN", "short")]);
        assert!(e.contains("COMPUTERD_TOKEN") && e.contains("16"), "{e}");
        let e = error_of(&[("COMPUTERD_HOME", "relative/dir")]);
        assert!(
            e.contains("COMPUTERD_HOME") && e.contains("absolute"),
            "{e}"
        );
        let e = Config::from_sources(&["--bogus".into()], &env(&[]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("--bogus"), "{e}");
    }

    #[test]
    fn shell_default_follows_a_low_maximum() {
        let c =
            Config::from_sources(&[], &env(&[("COMPUTER_USE_SHELL_TIMEOUT_MAX", "1m")])).unwrap();
        assert_eq!(c.shell_timeout, Duration::from_secs(60));
        let e = error_of(&[
            ("COMPUTER_USE_SHELL_TIMEOUT", "10m"),
            ("COMPUTER_USE_SHELL_TIMEOUT_MAX", "5m"),
        ]);
        assert!(
            e.contains("COMPUTER_USE_SHELL_TIMEOUT")
                && e.contains("must not exceed")
                && e.contains("5m"),
            "{e}"
        );
    }

    #[test]
    fn the_token_can_come_from_a_file_that_is_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("token");
        std::fs::write(&file, "0123456789abcdef0123\n").unwrap();
        let path = file.to_str().unwrap();
        let mut only_file = env(&[("COMPUTERD_TOKEN_FILE", path)]);
        only_file.remove("COMPUTERD_TOKEN");
        let c = Config::from_sources(&[], &only_file).unwrap();
        assert_eq!(c.token, "0123456789abcdef0123");
        assert!(!file.exists(), "the token file is deleted once read");
        let e = Config::from_sources(&[], &only_file)
            .unwrap_err()
            .to_string();
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

    #[test]
    fn screen_sizes() {
        assert_eq!(
            ScreenSize::parse("320x7680"),
            Ok(ScreenSize {
                width: 320,
                height: 7680
            })
        );
        assert!(ScreenSize::parse("7681x800").is_err());
        assert!(ScreenSize::parse("1280").is_err());
        assert!(ScreenSize::parse("axb").is_err());
    }
}
