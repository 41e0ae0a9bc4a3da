//! The host's `COMPUTER_USE_*` settings, each read at the moment the spec
//! names: [`ComputerSettings`] when the computer is created (name, port base,
//! image, memory and CPU limits), [`Settings::for_start_computer`] when `start_computer` runs, and
//! [`DevtoolsSettings::for_start_chrome_devtools`] when DevTools starts.
//!
//! Everything parses from an [`Env`] map rather than the process environment,
//! so tests never touch global state. An empty value counts as unset, because
//! MCP clients often write `"VAR": ""` for "no value".

use crate::version::default_image;
use computer_protocol::duration::{format_duration, parse_duration, DurationError};
use computer_protocol::limits::{HEARTBEAT_WINDOW_MAX_SECS, HEARTBEAT_WINDOW_MIN_SECS};
use computer_protocol::network::{self, NetworkPolicy};
use computer_protocol::ScreenSize;
use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

mod resources;
pub use resources::{
    format_cpus, format_size, MemoryLimit, ResourceLimits, CPUS, MEMORY, MEMORY_SET_MIN,
};

/// Environment variables by name.
pub type Env = HashMap<String, String>;

/// This process's environment, read once by the caller.
pub fn process_env() -> Env {
    std::env::vars().collect()
}

pub const NAME: &str = "COMPUTER_USE_NAME";
pub const SCREEN_SIZE: &str = "COMPUTER_USE_SCREEN_SIZE";
pub const SHELL_TIMEOUT: &str = "COMPUTER_USE_SHELL_TIMEOUT";
pub const SHELL_TIMEOUT_MAX: &str = "COMPUTER_USE_SHELL_TIMEOUT_MAX";
pub const IDLE_TIMEOUT: &str = "COMPUTER_USE_IDLE_TIMEOUT";
pub const IDLE_STOP: &str = "COMPUTER_USE_IDLE_STOP";
pub const HEARTBEAT_WINDOW: &str = "COMPUTER_USE_HEARTBEAT_WINDOW";
pub const DEVTOOLS_IDLE: &str = "COMPUTER_USE_DEVTOOLS_IDLE";
pub const PORT_BASE: &str = "COMPUTER_USE_PORT_BASE";
pub const OPEN: &str = "COMPUTER_USE_OPEN";
pub const VNC_VIEWER: &str = "COMPUTER_USE_VNC_VIEWER";
pub const TUNNEL: &str = "COMPUTER_USE_TUNNEL";
/// The bearer token of `serve --http`; a secret no child inherits.
pub const HTTP_TOKEN: &str = "COMPUTER_USE_HTTP_TOKEN";
pub const IMAGE: &str = "COMPUTER_USE_IMAGE";
pub const TEMPLATE: &str = "COMPUTER_USE_TEMPLATE";
pub const FRAME_MAX_SIDE: &str = "COMPUTER_USE_FRAME_MAX_SIDE";
pub const FRAME_MAX_PIXELS: &str = "COMPUTER_USE_FRAME_MAX_PIXELS";

pub const DEFAULT_NAME: &str = "computer-use";
pub const DEFAULT_PORT_BASE: u16 = 20900;
/// The computer publishes `base..=base + 16`, so the base stops 16 short of
/// the last port.
pub const PORT_BASE_MIN: u16 = 1024;
pub const PORT_BASE_MAX: u16 = 65519;
const DEFAULT_SHELL_TIMEOUT: Duration = Duration::from_secs(120);
const DEFAULT_SHELL_TIMEOUT_MAX: Duration = Duration::from_secs(600);
const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(3600);
/// computerd's own default, and the pace of a host that sets none: a host
/// that beats every 10 s may miss two.
pub const DEFAULT_HEARTBEAT_WINDOW: Duration = Duration::from_secs(30);
const DEFAULT_DEVTOOLS_IDLE: Duration = Duration::from_secs(600);
/// `start_chrome_devtools` drives DevTools through `shell`; its first call
/// can take most of a minute while Chromium and the bridge start.
pub const DEVTOOLS_SHELL_TIMEOUT_MIN: Duration = Duration::from_secs(60);

/// A setting with a value the host cannot use. The message names the
/// variable, the value, and what to write instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{name}` is `{value}`: {expected}")]
pub struct SettingsError {
    pub name: &'static str,
    pub value: String,
    pub expected: String,
}

/// Settings of the computer itself. They apply when the container is
/// created; an existing computer keeps the name, ports, image and limits it
/// has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComputerSettings {
    /// Container name; the home volume is `<name>-home`.
    pub name: String,
    /// First of the 17 host ports published on 127.0.0.1.
    pub port_base: u16,
    /// Image a new computer is created from.
    pub image: String,
    /// Memory and CPUs a new computer may use.
    pub limits: ResourceLimits,
    /// How its ports are reached.
    pub tunnel: TunnelMode,
    /// What its network guard lets it reach (`COMPUTER_USE_EGRESS` and
    /// friends); containment itself is not a setting.
    pub network: NetworkPolicy,
    /// A tenant's home key (`serve::tenants::home_key`): its home volume
    /// is labelled with it, and a home labelled with another is refused.
    /// `None` for the one computer of stdio or a one-token server.
    pub home_key: Option<String>,
    /// `COMPUTER_USE_TEMPLATE`: the snapshot a computer that does not exist
    /// yet starts from, as `NAME` or `COMPUTER:NAME`.
    pub template: Option<Template>,
}

/// A snapshot named as a template: `COMPUTER:NAME`, or `NAME` alone when
/// one computer on the engine has a snapshot of that name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pub computer: Option<String>,
    pub name: String,
}

impl fmt::Display for Template {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.computer {
            Some(computer) => write!(f, "{computer}:{}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

/// The network policy `env` sets (`COMPUTER_USE_EGRESS` and friends): the
/// server's own, or a tenant's line over it.
pub fn network_policy(env: &Env) -> Result<NetworkPolicy, SettingsError> {
    NetworkPolicy::from_settings(
        get(env, network::EGRESS),
        get(env, network::EGRESS_ALLOW),
        get(env, network::EGRESS_PRIVATE),
        get(env, network::HOST_PORTS),
        get(env, network::EGRESS_DNS),
    )
    .map_err(|e| SettingsError {
        name: e.variable,
        value: e.value,
        expected: e.expected,
    })
}

impl ComputerSettings {
    pub fn from_env(env: &Env) -> Result<ComputerSettings, SettingsError> {
        let name = match get(env, NAME) {
            None => DEFAULT_NAME.to_string(),
            Some(v) => container_name(v)?,
        };
        let port_base = match get(env, PORT_BASE) {
            None => DEFAULT_PORT_BASE,
            Some(v) => port_base(v)?,
        };
        let image = get(env, IMAGE)
            .map(str::to_string)
            .unwrap_or_else(default_image);
        let limits = ResourceLimits::from_env(env)?;
        let tunnel = match get(env, TUNNEL) {
            None => TunnelMode::Auto,
            Some(v) => tunnel_mode(v)?,
        };
        let network = network_policy(env)?;
        let template = get(env, TEMPLATE).map(template).transpose()?;
        Ok(ComputerSettings {
            name,
            port_base,
            image,
            limits,
            tunnel,
            network,
            home_key: None,
            template,
        })
    }

    /// The named volume that holds `/home/computer`.
    pub fn volume(&self) -> String {
        format!("{}-home", self.name)
    }
}

/// Per-session defaults sent to computerd with each new session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionDefaults {
    pub screen_size: ScreenSize,
    /// `shell` timeout when the agent gives none.
    pub shell_timeout: Duration,
    /// Longest `shell` timeout an agent may ask for.
    pub shell_timeout_max: Duration,
    /// A session ends after this long without agent calls.
    pub idle_timeout: Duration,
    /// The computer stops after this long without sessions or viewers;
    /// `None` (the default): never by itself.
    pub idle_stop: Option<Duration>,
    /// This process's sessions end this long after its last heartbeat;
    /// `None` (unset): computerd's own window, 30 s unless its container
    /// says otherwise. Sent only when set, so a host left at its defaults
    /// still starts sessions on a computer older than this setting.
    pub heartbeat_window: Option<Duration>,
}

impl SessionDefaults {
    /// The wire form computerd takes in `POST /v1/sessions`.
    pub fn to_wire(&self) -> computer_protocol::SessionSettings {
        computer_protocol::SessionSettings {
            screen_size: Some(self.screen_size.to_string()),
            idle_timeout_secs: Some(self.idle_timeout.as_secs()),
            shell_timeout_secs: Some(self.shell_timeout.as_secs()),
            shell_timeout_max_secs: Some(self.shell_timeout_max.as_secs()),
            idle_stop_secs: self.idle_stop.map(|d| d.as_secs()),
            heartbeat_window_secs: self.heartbeat_window.map(|d| d.as_secs()),
        }
    }
}

/// What opens when one of this process's sessions gets its screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMode {
    Browser,
    Vnc,
    None,
}

/// How the host reaches the computer's ports (`COMPUTER_USE_TUNNEL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TunnelMode {
    /// Published ports on a local engine, the tunnel on a remote one.
    Auto,
    /// The tunnel on every engine, local ones too.
    Always,
}

/// Everything `start_computer` reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    pub computer: ComputerSettings,
    pub session: SessionDefaults,
    pub open: OpenMode,
    /// The TigerVNC viewer `vnc` mode runs on Windows, as set; the opener
    /// checks that it is a file. Always `None` on other systems.
    pub vnc_viewer: Option<PathBuf>,
}

impl Settings {
    /// These settings for an agent that reaches the server over HTTP: the
    /// server's desktop belongs to whoever runs the server, not to the
    /// agent's person (a handoff would pop up there, key and all), so
    /// nothing opens on it unless [`OPEN`] says so.
    pub fn for_remote_agent(mut self, env: &Env) -> Settings {
        if get(env, OPEN).is_none() {
            self.open = OpenMode::None;
        }
        self
    }

    /// Reads and checks every setting `start_computer` uses; the first bad
    /// one is the error.
    pub fn for_start_computer(env: &Env) -> Result<Settings, SettingsError> {
        let computer = ComputerSettings::from_env(env)?;
        let screen_size = match get(env, SCREEN_SIZE) {
            None => ScreenSize {
                width: 1280,
                height: 800,
            },
            Some(v) => screen_size(v)?,
        };
        let shell_timeout_max = duration(env, SHELL_TIMEOUT_MAX, DEFAULT_SHELL_TIMEOUT_MAX)?;
        let shell_timeout = match get(env, SHELL_TIMEOUT) {
            // The default follows a maximum set below it rather than break.
            None => DEFAULT_SHELL_TIMEOUT.min(shell_timeout_max),
            Some(v) => {
                let chosen = duration_value(SHELL_TIMEOUT, v)?;
                if chosen > shell_timeout_max {
                    return Err(SettingsError {
                        name: SHELL_TIMEOUT,
                        value: v.to_string(),
                        expected: format!(
                            "it must not exceed `{SHELL_TIMEOUT_MAX}` ({}); lower it or raise the maximum",
                            format_duration(shell_timeout_max)
                        ),
                    });
                }
                chosen
            }
        };
        let idle_timeout = duration(env, IDLE_TIMEOUT, DEFAULT_IDLE_TIMEOUT)?;
        let idle_stop = match get(env, IDLE_STOP) {
            None => None,
            Some(v) if v.eq_ignore_ascii_case("off") => None,
            Some(v) => Some(duration_value(IDLE_STOP, v)?),
        };
        let heartbeat_window = heartbeat_window(env)?;
        let open = match get(env, OPEN) {
            None => OpenMode::Browser,
            Some(v) => open_mode(v)?,
        };
        // Not checked here: a viewer that is not there makes `vnc` open the
        // browser (and say why on stderr); it never fails a call.
        let vnc_viewer = get(env, VNC_VIEWER)
            .filter(|_| cfg!(windows))
            .map(PathBuf::from);
        Ok(Settings {
            computer,
            session: SessionDefaults {
                screen_size,
                shell_timeout,
                shell_timeout_max,
                idle_timeout,
                idle_stop,
                heartbeat_window,
            },
            open,
            vnc_viewer,
        })
    }
}

/// How long after this process's last heartbeat computerd ends its
/// sessions ([`HEARTBEAT_WINDOW`]): a killed host's screens are freed that
/// soon, and a host whose beats are held up that long loses its sessions.
/// Read when `start_computer` runs, which sends it with each new session,
/// and when an agent's heartbeat starts, which beats at a third of it.
/// `None` when unset.
pub fn heartbeat_window(env: &Env) -> Result<Option<Duration>, SettingsError> {
    let Some(value) = get(env, HEARTBEAT_WINDOW) else {
        return Ok(None);
    };
    let window = duration_value(HEARTBEAT_WINDOW, value)?;
    let bounds = HEARTBEAT_WINDOW_MIN_SECS..=HEARTBEAT_WINDOW_MAX_SECS;
    if bounds.contains(&window.as_secs()) {
        return Ok(Some(window));
    }
    Err(SettingsError {
        name: HEARTBEAT_WINDOW,
        value: value.to_string(),
        expected: format!(
            "use between {HEARTBEAT_WINDOW_MIN_SECS} seconds and {} (default {})",
            format_duration(Duration::from_secs(HEARTBEAT_WINDOW_MAX_SECS)),
            format_duration(DEFAULT_HEARTBEAT_WINDOW)
        ),
    })
}

/// Everything `start_chrome_devtools` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DevtoolsSettings {
    /// A DevTools bridge stops itself after this long without calls.
    pub idle: Duration,
}

impl DevtoolsSettings {
    /// Also checks that `shell` may run long enough for the DevTools calls the
    /// agent makes through it.
    pub fn for_start_chrome_devtools(env: &Env) -> Result<DevtoolsSettings, SettingsError> {
        let idle = duration(env, DEVTOOLS_IDLE, DEFAULT_DEVTOOLS_IDLE)?;
        let max = duration(env, SHELL_TIMEOUT_MAX, DEFAULT_SHELL_TIMEOUT_MAX)?;
        if max < DEVTOOLS_SHELL_TIMEOUT_MIN {
            return Err(SettingsError {
                name: SHELL_TIMEOUT_MAX,
                value: get(env, SHELL_TIMEOUT_MAX).unwrap_or_default().to_string(),
                expected: format!(
                    "`start_chrome_devtools` needs at least {}; raise it",
                    format_duration(DEVTOOLS_SHELL_TIMEOUT_MIN)
                ),
            });
        }
        Ok(DevtoolsSettings { idle })
    }
}

/// The bounds of a screenshot when the agent gives no `max_side`; read at
/// each call that returns one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameDefaults {
    pub max_side: u32,
    pub max_pixels: u64,
}

impl FrameDefaults {
    pub fn from_env(env: &Env) -> Result<FrameDefaults, SettingsError> {
        use computer_protocol::frame::{
            DEFAULT_MAX_PIXELS, DEFAULT_MAX_SIDE, MAX_SIDE_MAX, MAX_SIDE_MIN,
        };
        let max_side = whole_number(
            env,
            FRAME_MAX_SIDE,
            u64::from(MAX_SIDE_MIN)..=u64::from(MAX_SIDE_MAX),
            u64::from(DEFAULT_MAX_SIDE),
            " of pixels",
        )? as u32;
        let max_pixels = whole_number(
            env,
            FRAME_MAX_PIXELS,
            65_536..=59_000_000,
            DEFAULT_MAX_PIXELS,
            " of pixels",
        )?;
        Ok(FrameDefaults {
            max_side,
            max_pixels,
        })
    }
}

fn get<'a>(env: &'a Env, name: &str) -> Option<&'a str> {
    env.get(name).map(|v| v.trim()).filter(|v| !v.is_empty())
}

/// Setting `name` as a whole number of `unit` within `range`, or `default`
/// when unset or blank; the error names the setting, the range and the
/// default.
pub fn whole_number(
    env: &Env,
    name: &'static str,
    range: std::ops::RangeInclusive<u64>,
    default: u64,
    unit: &str,
) -> Result<u64, SettingsError> {
    let Some(text) = get(env, name) else {
        return Ok(default);
    };
    match text.parse::<u64>() {
        Ok(n) if range.contains(&n) => Ok(n),
        _ => Err(SettingsError {
            name,
            value: text.to_string(),
            expected: format!(
                "give a whole number{unit} from {} to {} (default {default})",
                range.start(),
                range.end()
            ),
        }),
    }
}

/// Docker's rule for container (and volume) names, which includes a minimum
/// of two characters.
fn container_name(value: &str) -> Result<String, SettingsError> {
    let mut chars = value.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphanumeric());
    let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    if first_ok && rest_ok && value.len() >= 2 {
        Ok(value.to_string())
    } else {
        Err(SettingsError {
            name: NAME,
            value: value.to_string(),
            expected: "use 2 or more of the letters a-z, A-Z, digits, `_`, `.` and `-`, starting with a letter or digit, such as `computer-use`".into(),
        })
    }
}

fn template(value: &str) -> Result<Template, SettingsError> {
    let (computer, name) = match value.split_once(':') {
        Some((computer, name)) => (Some(computer), name),
        None => (None, value),
    };
    let name_ok = (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| matches!(c, 'a'..='z' | '0'..='9' | '.' | '_' | '-'));
    let computer_ok = computer.is_none_or(|c| container_name(c).is_ok());
    if name_ok && computer_ok {
        Ok(Template {
            computer: computer.map(str::to_string),
            name: name.to_string(),
        })
    } else {
        Err(SettingsError {
            name: TEMPLATE,
            value: value.to_string(),
            expected: "name a snapshot: `NAME` (1 to 64 of a-z, 0-9, `.`, `_`, `-`), or `COMPUTER:NAME` for the snapshot of that computer, as `computer-use snapshot list` shows".into(),
        })
    }
}

fn port_base(value: &str) -> Result<u16, SettingsError> {
    value
        .parse::<u16>()
        .ok()
        .filter(|p| (PORT_BASE_MIN..=PORT_BASE_MAX).contains(p))
        .ok_or_else(|| SettingsError {
            name: PORT_BASE,
            value: value.to_string(),
            expected: format!(
                "use a port from {PORT_BASE_MIN} to {PORT_BASE_MAX}; the computer takes it and the 16 after it"
            ),
        })
}

fn screen_size(value: &str) -> Result<ScreenSize, SettingsError> {
    ScreenSize::parse(value).map_err(|e| SettingsError {
        name: SCREEN_SIZE,
        value: value.to_string(),
        expected: e.to_string(),
    })
}

fn duration(env: &Env, name: &'static str, default: Duration) -> Result<Duration, SettingsError> {
    match get(env, name) {
        None => Ok(default),
        Some(v) => duration_value(name, v),
    }
}

fn duration_value(name: &'static str, value: &str) -> Result<Duration, SettingsError> {
    parse_duration(value).map_err(|e| SettingsError {
        name,
        value: value.to_string(),
        expected: match e {
            DurationError::Malformed(_) => {
                "use whole seconds (`90`) or a number with `s`, `m` or `h` (`90s`, `2m`, `1h`)"
                    .into()
            }
            DurationError::Zero(_) => "use at least 1 second".into(),
        },
    })
}

fn open_mode(value: &str) -> Result<OpenMode, SettingsError> {
    match value.to_ascii_lowercase().as_str() {
        "browser" => Ok(OpenMode::Browser),
        "vnc" => Ok(OpenMode::Vnc),
        "none" => Ok(OpenMode::None),
        _ => Err(SettingsError {
            name: OPEN,
            value: value.to_string(),
            expected: "use `browser`, `vnc` or `none`".into(),
        }),
    }
}

fn tunnel_mode(value: &str) -> Result<TunnelMode, SettingsError> {
    match value.to_ascii_lowercase().as_str() {
        "auto" => Ok(TunnelMode::Auto),
        "always" => Ok(TunnelMode::Always),
        _ => Err(SettingsError {
            name: TUNNEL,
            value: value.to_string(),
            expected: "use `auto` (the tunnel only for a remote engine) or `always`".into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Env {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn error_of(pairs: &[(&str, &str)]) -> SettingsError {
        Settings::for_start_computer(&env(pairs)).unwrap_err()
    }

    #[test]
    fn defaults_when_nothing_is_set() {
        let s = Settings::for_start_computer(&env(&[])).unwrap();
        assert_eq!(s.computer.name, "computer-use");
        assert_eq!(s.computer.volume(), "computer-use-home");
        assert_eq!(s.computer.port_base, 20900);
        assert_eq!(s.computer.image, default_image());
        assert_eq!(s.session.screen_size.to_string(), "1280x800");
        assert_eq!(s.session.shell_timeout, Duration::from_secs(120));
        assert_eq!(s.session.shell_timeout_max, Duration::from_secs(600));
        assert_eq!(s.session.idle_timeout, Duration::from_secs(3600));
        assert_eq!(s.open, OpenMode::Browser);
        assert_eq!(s.vnc_viewer, None);
        let d = DevtoolsSettings::for_start_chrome_devtools(&env(&[])).unwrap();
        assert_eq!(d.idle, Duration::from_secs(600));
    }

    #[test]
    fn the_heartbeat_window_goes_to_computerd_and_is_bounded() {
        let read = |pairs: &[(&str, &str)]| Settings::for_start_computer(&env(pairs));
        let default = read(&[]).unwrap().session;
        assert_eq!(default.heartbeat_window, None);
        assert_eq!(default.to_wire().heartbeat_window_secs, None);
        let short = read(&[(HEARTBEAT_WINDOW, "6s")]).unwrap().session;
        assert_eq!(short.to_wire().heartbeat_window_secs, Some(6));
        assert_eq!(
            heartbeat_window(&env(&[(HEARTBEAT_WINDOW, "1h")])),
            Ok(Some(Duration::from_secs(3600)))
        );
        assert_eq!(
            error_of(&[(HEARTBEAT_WINDOW, "2s")]).to_string(),
            "`COMPUTER_USE_HEARTBEAT_WINDOW` is `2s`: use between 3 seconds and 1h (default 30s)"
        );
        for bad in ["61m", "0", "often"] {
            assert_eq!(
                error_of(&[(HEARTBEAT_WINDOW, bad)]).name,
                HEARTBEAT_WINDOW,
                "{bad}"
            );
        }
    }

    #[test]
    fn the_idle_stop_is_off_unless_given_a_time() {
        let read = |pairs: &[(&str, &str)]| Settings::for_start_computer(&env(pairs));
        assert_eq!(read(&[]).unwrap().session.idle_stop, None);
        assert_eq!(read(&[(IDLE_STOP, "off")]).unwrap().session.idle_stop, None);
        let on = read(&[(IDLE_STOP, "30m")]).unwrap().session;
        assert_eq!(on.idle_stop, Some(Duration::from_secs(1800)));
        assert_eq!(on.to_wire().idle_stop_secs, Some(1800));
        assert_eq!(read(&[]).unwrap().session.to_wire().idle_stop_secs, None);
        for bad in ["0", "soon"] {
            assert_eq!(
                read(&[(IDLE_STOP, bad)]).unwrap_err().name,
                IDLE_STOP,
                "{bad}"
            );
        }
    }

    #[test]
    fn a_template_names_a_snapshot_with_or_without_its_computer() {
        let read = |v: &str| Settings::for_start_computer(&env(&[(TEMPLATE, v)]));
        let plain = read("base").unwrap().computer.template.unwrap();
        assert_eq!((plain.computer, plain.name.as_str()), (None, "base"));
        let of = read("builder:with-tools")
            .unwrap()
            .computer
            .template
            .unwrap();
        assert_eq!(of.computer.as_deref(), Some("builder"));
        assert_eq!(of.to_string(), "builder:with-tools");
        assert_eq!(read("").unwrap().computer.template, None);
        for bad in ["Base", "a:b:c", ":x", "x:", "-x:y", &"n".repeat(65)] {
            let e = read(bad).unwrap_err();
            assert_eq!(e.name, TEMPLATE, "{bad}");
            assert!(e.expected.contains("COMPUTER:NAME"), "{bad}");
        }
    }

    #[test]
    fn dev_builds_use_the_dev_image() {
        // Tests build with debug assertions, like every dev build.
        assert_eq!(default_image(), "computer-use-mcp:dev");
    }

    #[test]
    fn reads_every_variable() {
        let s = Settings::for_start_computer(&env(&[
            (NAME, "other.box_2"),
            (PORT_BASE, "21900"),
            (IMAGE, "example/computer:1"),
            (SCREEN_SIZE, "1920X1080"),
            (SHELL_TIMEOUT, "90s"),
            (SHELL_TIMEOUT_MAX, "2m"),
            (IDLE_TIMEOUT, "30m"),
            (OPEN, "VNC"),
        ]))
        .unwrap();
        assert_eq!(s.computer.name, "other.box_2");
        assert_eq!(s.computer.volume(), "other.box_2-home");
        assert_eq!(s.computer.port_base, 21900);
        assert_eq!(s.computer.image, "example/computer:1");
        assert_eq!(
            s.session.screen_size,
            ScreenSize {
                width: 1920,
                height: 1080
            }
        );
        assert_eq!(s.session.shell_timeout, Duration::from_secs(90));
        assert_eq!(s.session.shell_timeout_max, Duration::from_secs(120));
        assert_eq!(s.session.idle_timeout, Duration::from_secs(1800));
        assert_eq!(s.open, OpenMode::Vnc);
        let wire = s.session.to_wire();
        assert_eq!(wire.screen_size.as_deref(), Some("1920x1080"));
        assert_eq!(wire.shell_timeout_secs, Some(90));
        assert_eq!(wire.shell_timeout_max_secs, Some(120));
        assert_eq!(wire.idle_timeout_secs, Some(1800));
        let d =
            DevtoolsSettings::for_start_chrome_devtools(&env(&[(DEVTOOLS_IDLE, "90")])).unwrap();
        assert_eq!(d.idle, Duration::from_secs(90));
    }

    #[test]
    fn empty_values_count_as_unset() {
        let s = Settings::for_start_computer(&env(&[(NAME, ""), (PORT_BASE, " "), (OPEN, "")]))
            .unwrap();
        assert_eq!(s.computer.name, "computer-use");
        assert_eq!(s.computer.port_base, 20900);
        assert_eq!(s.open, OpenMode::Browser);
    }

    #[test]
    fn default_shell_timeout_follows_a_lower_maximum() {
        let s = Settings::for_start_computer(&env(&[(SHELL_TIMEOUT_MAX, "45")])).unwrap();
        assert_eq!(s.session.shell_timeout, Duration::from_secs(45));
        assert_eq!(s.session.shell_timeout_max, Duration::from_secs(45));
    }

    #[test]
    fn refuses_bad_names() {
        for bad in [
            "a", "-box", "_box", ".box", "my box", "box/1", "bøx", "box:1",
        ] {
            let e = error_of(&[(NAME, bad)]);
            assert_eq!(e.name, NAME, "{bad}");
            assert_eq!(
                e.to_string(),
                format!("`COMPUTER_USE_NAME` is `{bad}`: use 2 or more of the letters a-z, A-Z, digits, `_`, `.` and `-`, starting with a letter or digit, such as `computer-use`")
            );
        }
    }

    #[test]
    fn refuses_bad_screen_sizes() {
        for bad in [
            "1280",
            "1280x",
            "x800",
            "319x800",
            "1280x7681",
            "wide x tall",
            "1280x800x2",
            "-1x800",
        ] {
            assert_eq!(
                error_of(&[(SCREEN_SIZE, bad)]).to_string(),
                format!("`COMPUTER_USE_SCREEN_SIZE` is `{bad}`: use `<width>x<height>` with sides from 320 to 7680, such as `1280x800`"),
            );
        }
        // Both ends of the range are allowed.
        assert!(Settings::for_start_computer(&env(&[(SCREEN_SIZE, "320x7680")])).is_ok());
    }

    #[test]
    fn refuses_bad_durations_naming_the_variable() {
        for name in [SHELL_TIMEOUT, SHELL_TIMEOUT_MAX, IDLE_TIMEOUT] {
            assert_eq!(
                error_of(&[(name, "2d")]).to_string(),
                format!("`{name}` is `2d`: use whole seconds (`90`) or a number with `s`, `m` or `h` (`90s`, `2m`, `1h`)")
            );
            assert_eq!(
                error_of(&[(name, "0m")]).to_string(),
                format!("`{name}` is `0m`: use at least 1 second")
            );
        }
        let e = DevtoolsSettings::for_start_chrome_devtools(&env(&[(DEVTOOLS_IDLE, "soon")]))
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "`COMPUTER_USE_DEVTOOLS_IDLE` is `soon`: use whole seconds (`90`) or a number with `s`, `m` or `h` (`90s`, `2m`, `1h`)"
        );
    }

    #[test]
    fn refuses_a_default_above_the_maximum() {
        assert_eq!(
            error_of(&[(SHELL_TIMEOUT, "15m")]).to_string(),
            "`COMPUTER_USE_SHELL_TIMEOUT` is `15m`: it must not exceed `COMPUTER_USE_SHELL_TIMEOUT_MAX` (10m); lower it or raise the maximum"
        );
        assert_eq!(
            error_of(&[(SHELL_TIMEOUT, "100"), (SHELL_TIMEOUT_MAX, "90")]).to_string(),
            "`COMPUTER_USE_SHELL_TIMEOUT` is `100`: it must not exceed `COMPUTER_USE_SHELL_TIMEOUT_MAX` (90s); lower it or raise the maximum"
        );
    }

    #[test]
    fn devtools_needs_a_minute_of_shell() {
        let e = DevtoolsSettings::for_start_chrome_devtools(&env(&[(SHELL_TIMEOUT_MAX, "59")]))
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "`COMPUTER_USE_SHELL_TIMEOUT_MAX` is `59`: `start_chrome_devtools` needs at least 1m; raise it"
        );
        assert!(
            DevtoolsSettings::for_start_chrome_devtools(&env(&[(SHELL_TIMEOUT_MAX, "1m")])).is_ok()
        );
    }

    #[test]
    fn refuses_bad_port_bases() {
        for bad in ["80", "1023", "65520", "70000", "20900x", "-1"] {
            assert_eq!(
                error_of(&[(PORT_BASE, bad)]).to_string(),
                format!("`COMPUTER_USE_PORT_BASE` is `{bad}`: use a port from 1024 to 65519; the computer takes it and the 16 after it")
            );
        }
        for good in ["1024", "65519"] {
            assert!(Settings::for_start_computer(&env(&[(PORT_BASE, good)])).is_ok());
        }
    }

    #[test]
    fn refuses_bad_open_modes() {
        assert_eq!(
            error_of(&[(OPEN, "tab")]).to_string(),
            "`COMPUTER_USE_OPEN` is `tab`: use `browser`, `vnc` or `none`"
        );
        let s = Settings::for_start_computer(&env(&[(OPEN, "none")])).unwrap();
        assert_eq!(s.open, OpenMode::None);
    }

    #[test]
    fn an_agent_over_http_opens_nothing_on_the_servers_desktop_unless_asked() {
        let read = |pairs: &[(&str, &str)]| {
            let env = env(pairs);
            let local = Settings::for_start_computer(&env).unwrap();
            (local.open, local.for_remote_agent(&env).open)
        };
        assert_eq!(read(&[]), (OpenMode::Browser, OpenMode::None));
        assert_eq!(read(&[(OPEN, " ")]), (OpenMode::Browser, OpenMode::None));
        assert_eq!(
            read(&[(OPEN, "browser")]),
            (OpenMode::Browser, OpenMode::Browser)
        );
        assert_eq!(read(&[(OPEN, "vnc")]), (OpenMode::Vnc, OpenMode::Vnc));
    }

    #[test]
    fn the_tunnel_is_auto_unless_always_is_asked_for() {
        let read = |pairs: &[(&str, &str)]| {
            Settings::for_start_computer(&env(pairs))
                .unwrap()
                .computer
                .tunnel
        };
        assert_eq!(read(&[]), TunnelMode::Auto);
        assert_eq!(read(&[(TUNNEL, "ALWAYS")]), TunnelMode::Always);
        assert_eq!(
            error_of(&[(TUNNEL, "yes")]).to_string(),
            "`COMPUTER_USE_TUNNEL` is `yes`: use `auto` (the tunnel only for a remote engine) or `always`"
        );
    }

    #[test]
    fn a_missing_vnc_viewer_is_no_settings_error_and_is_ignored_off_windows() {
        let read = |open: &str| {
            Settings::for_start_computer(&env(&[(OPEN, open), (VNC_VIEWER, "/no/such/viewer")]))
                .expect("a viewer that is not there fails no call")
                .vnc_viewer
        };
        for open in ["browser", "vnc", "none"] {
            if cfg!(windows) {
                assert_eq!(read(open), Some(PathBuf::from("/no/such/viewer")));
            } else {
                assert_eq!(read(open), None);
            }
        }
    }
}
