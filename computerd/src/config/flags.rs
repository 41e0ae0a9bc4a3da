//! computerd's flags, each with its environment variable, as clap reads
//! them: a flag wins over its variable, a setting given neither takes its
//! default, and a value out of range is refused by the setting's check,
//! naming the variable, the flag, the value and what to give instead.
//!
//! Settings that depend on another one or on the file system (the token
//! and its file, the home folder, the shell timeout against its maximum)
//! are checked after this, in [`super::Config`].

use clap::builder::TypedValueParser;
use clap::error::ErrorKind;
use clap::{Arg, Command, CommandFactory, FromArgMatches, Parser};
use computer_protocol::duration::{parse_duration, DurationError};
use computer_protocol::{BadScreenSize, ScreenSize};
use std::ffi::{OsStr, OsString};
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

/// Every setting as given, each field checked on its own. No `Debug`: it
/// holds the token.
#[derive(Parser)]
#[command(
    name = "computerd",
    version,
    about = "computerd: the daemon inside the computer",
    after_help = "Every flag has an environment variable; the flag wins."
)]
pub struct Flags {
    /// API address (the image sets 0.0.0.0:7070)
    #[arg(long, env = "COMPUTERD_LISTEN", value_name = "ADDR", default_value = "127.0.0.1:7070",
          value_parser = Checked(|v| address(v, "0.0.0.0:7070")))]
    pub listen: SocketAddr,

    /// Bearer token of the API (required, 16 characters or more)
    #[arg(long, env = "COMPUTERD_TOKEN", value_name = "TOKEN")]
    pub token: Option<String>,

    /// A file holding the token instead, read and deleted at start (the
    /// image's entrypoint writes it, so no process's environment shows the
    /// token)
    #[arg(long, env = "COMPUTERD_TOKEN_FILE", value_name = "PATH")]
    pub token_file: Option<PathBuf>,

    /// Home folder (default $HOME)
    #[arg(long, env = "COMPUTERD_HOME", value_name = "PATH")]
    pub home: Option<PathBuf>,

    /// Screen N is X display :BASE+N (up to 9000)
    #[arg(long, env = "COMPUTERD_DISPLAY_BASE", value_name = "BASE", default_value = "0",
          value_parser = Checked(display_base))]
    pub display_base: u32,

    /// Screen N serves VNC on port BASE+N
    #[arg(long, env = "COMPUTERD_RFB_PORT_BASE", value_name = "BASE", default_value = "5900",
          value_parser = Checked(port_base))]
    pub rfb_port_base: u16,

    /// Address Xvnc listens on for VNC (the image sets 0.0.0.0)
    #[arg(long, env = "COMPUTERD_RFB_INTERFACE", value_name = "IP", default_value = "127.0.0.1",
          value_parser = Checked(ip_address))]
    pub rfb_interface: String,

    /// Host port of the viewer: the printed link and the port browsers must
    /// use
    #[arg(long, env = "COMPUTER_USE_PORT_BASE", value_name = "PORT", default_value = "20900",
          value_parser = Checked(port_base))]
    pub port_base: u16,

    /// Viewer page and WebSocket address (the image sets 0.0.0.0:6080)
    #[arg(long, env = "COMPUTERD_VIEWER_LISTEN", value_name = "ADDR", default_value = "127.0.0.1:6080",
          value_parser = Checked(|v| address(v, "0.0.0.0:6080")))]
    pub viewer_listen: SocketAddr,

    /// Viewer page files, noVNC in novnc/
    #[arg(long, env = "COMPUTERD_VIEWER_DIR", value_name = "PATH",
          default_value = "/usr/local/share/computer-use/viewer",
          value_parser = Checked(viewer_dir))]
    pub viewer_dir: PathBuf,

    /// Default screen size of a session
    #[arg(long, env = "COMPUTER_USE_SCREEN_SIZE", value_name = "WxH", default_value = "1280x800",
          value_parser = Checked(|v| Ok(ScreenSize::parse(v)?)))]
    pub screen_size: ScreenSize,

    /// Default idle timeout of a session
    #[arg(long, env = "COMPUTER_USE_IDLE_TIMEOUT", value_name = "DURATION", default_value = "1h",
          value_parser = Checked(duration))]
    pub idle_timeout: Duration,

    /// Default shell timeout (default 120, or the maximum when that is
    /// lower)
    #[arg(long, env = "COMPUTER_USE_SHELL_TIMEOUT", value_name = "DURATION",
          value_parser = Checked(duration))]
    pub shell_timeout: Option<Duration>,

    /// Longest shell timeout
    #[arg(long, env = "COMPUTER_USE_SHELL_TIMEOUT_MAX", value_name = "DURATION", default_value = "600",
          value_parser = Checked(duration))]
    pub shell_timeout_max: Duration,

    /// Sessions end this long after their owner's last heartbeat
    #[arg(long, env = "COMPUTERD_HEARTBEAT_GRACE", value_name = "DURATION", default_value = "30s",
          value_parser = Checked(duration))]
    pub heartbeat_grace: Duration,

    /// Fluxbox configuration folder
    #[arg(
        long,
        env = "COMPUTERD_FLUXBOX_DIR",
        value_name = "PATH",
        default_value = "/usr/local/share/computer-use/fluxbox"
    )]
    pub fluxbox_dir: PathBuf,

    /// Screen N's Chromium serves DevTools on 127.0.0.1:BASE+N
    #[arg(long, env = "COMPUTERD_DEVTOOLS_PORT_BASE", value_name = "BASE", default_value = "9221",
          value_parser = Checked(port_base))]
    pub devtools_port_base: u16,

    /// Launcher for the screens' menus and xdg-open, loopback only
    #[arg(long, env = "COMPUTERD_LAUNCHER_LISTEN", value_name = "ADDR", default_value = "127.0.0.1:7071",
          value_parser = Checked(launcher_address))]
    pub launcher_listen: SocketAddr,
}

impl Flags {
    /// Reads `args` (the program's name first) over the process's
    /// environment. `--help`, `--version`, an unknown flag and a bad value
    /// come back as clap's error, which knows how to print itself.
    pub fn parse_from_args<I, T>(args: I) -> Result<Flags, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        Flags::from_command(command(), args)
    }

    /// [`Flags::parse_from_args`] with `command`, which tests build without
    /// the environment.
    pub(super) fn from_command<I, T>(command: Command, args: I) -> Result<Flags, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        let matches = command.try_get_matches_from(args)?;
        Flags::from_arg_matches(&matches)
    }
}

/// The flags as clap sees them. `--help` shows each variable's name but
/// never its value: one of them is the API token.
pub fn command() -> Command {
    Flags::command().mut_args(|arg| arg.hide_env_values(true))
}

/// [`command`] reading no environment variable, for tests: the variables of
/// whoever runs them must not change what they see.
#[cfg(test)]
pub(super) fn command_without_environment() -> Command {
    command().mut_args(|arg| arg.env(None))
}

/// A setting's check as clap's value parser: `check` turns the text into
/// the value or says what the text should look like. The error names both
/// the variable and the flag, since the value came from one of them.
#[derive(Clone, Copy)]
struct Checked<T>(fn(&str) -> Result<T, Expected>);

impl<T: Clone + Send + Sync + 'static> TypedValueParser for Checked<T> {
    type Value = T;

    fn parse_ref(&self, cmd: &Command, arg: Option<&Arg>, value: &OsStr) -> Result<T, clap::Error> {
        let text = value.to_string_lossy();
        (self.0)(&text).map_err(|expected| {
            let name = arg.map(setting_name).unwrap_or_default();
            cmd.clone().error(
                ErrorKind::ValueValidation,
                format!("{name} is `{text}`: {expected}"),
            )
        })
    }
}

/// "`COMPUTERD_LISTEN` (`--listen`)": how an error names a setting.
fn setting_name(arg: &Arg) -> String {
    let flag = arg.get_long().map(|l| format!("`--{l}`"));
    match (arg.get_env(), flag) {
        (Some(env), Some(flag)) => format!("`{}` ({flag})", env.to_string_lossy()),
        (Some(env), None) => format!("`{}`", env.to_string_lossy()),
        (None, Some(flag)) => flag,
        (None, None) => format!("`{}`", arg.get_id()),
    }
}

/// What a setting's value should look like, said when it does not.
#[derive(Debug, thiserror::Error)]
enum Expected {
    #[error("use an address and port such as `{0}`")]
    Address(&'static str),
    #[error("use a loopback address and port such as `127.0.0.1:7071`: only programs on the computer may open apps")]
    LoopbackAddress,
    #[error("use a whole number from 0 to 9000")]
    DisplayBase,
    #[error("use a port from 1024 to 65519")]
    PortBase,
    #[error("use an IP address such as `127.0.0.1` or `0.0.0.0`")]
    IpAddress,
    #[error("use an absolute path to the folder holding the viewer's index.html")]
    AbsoluteFolder,
    #[error(transparent)]
    Duration(#[from] DurationError),
    #[error(transparent)]
    ScreenSize(#[from] BadScreenSize),
}

/// An address and port; `example` is one that fits the setting.
fn address(text: &str, example: &'static str) -> Result<SocketAddr, Expected> {
    text.parse().map_err(|_| Expected::Address(example))
}

/// The launcher opens apps for whoever calls it, so only programs on the
/// computer may reach it.
fn launcher_address(text: &str) -> Result<SocketAddr, Expected> {
    text.parse::<SocketAddr>()
        .ok()
        .filter(|a| a.ip().is_loopback())
        .ok_or(Expected::LoopbackAddress)
}

fn display_base(text: &str) -> Result<u32, Expected> {
    text.parse::<u32>()
        .ok()
        .filter(|n| *n <= 9000)
        .ok_or(Expected::DisplayBase)
}

/// The first of a block of 16 ports above the privileged range.
fn port_base(text: &str) -> Result<u16, Expected> {
    text.parse::<u16>()
        .ok()
        .filter(|n| (1024..=65519).contains(n))
        .ok_or(Expected::PortBase)
}

fn ip_address(text: &str) -> Result<String, Expected> {
    text.parse::<IpAddr>()
        .map(|_| text.to_string())
        .map_err(|_| Expected::IpAddress)
}

fn viewer_dir(text: &str) -> Result<PathBuf, Expected> {
    Some(PathBuf::from(text))
        .filter(|d| d.is_absolute())
        .ok_or(Expected::AbsoluteFolder)
}

fn duration(text: &str) -> Result<Duration, Expected> {
    Ok(parse_duration(text)?)
}
