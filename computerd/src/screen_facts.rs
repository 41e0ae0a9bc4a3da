//! Facts about a screen that many modules need and that depend on nothing
//! of the screen itself: the environment every process started on it gets
//! (its size is `computer_protocol::ScreenSize`, which the host parses
//! too). A leaf, so the browser, the launcher, the sessions and the
//! settings can name them without importing `screens` or `config`.
//!
//! The environment is one list, so no place sets `DISPLAY` without the
//! screen's session bus.

use crate::a11y;

/// What makes a process belong to one screen. `Copy`, so the screen facts
/// handed to the browser and the launcher carry it along.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScreenEnv {
    /// The X display number, `:N`.
    pub display: u32,
    /// The screen's own session bus runs (see [`a11y::A11yBus`]).
    pub session_bus: bool,
}

impl ScreenEnv {
    /// `DISPLAY`, the screen's `DBUS_SESSION_BUS_ADDRESS` (through which
    /// toolkits find the screen's AT-SPI bus) and the switch that makes Qt
    /// expose its tree without a screen reader running.
    pub fn vars(&self) -> Vec<(String, String)> {
        let mut vars = vec![
            ("DISPLAY".to_string(), format!(":{}", self.display)),
            (
                "QT_LINUX_ACCESSIBILITY_ALWAYS_ON".to_string(),
                "1".to_string(),
            ),
        ];
        if self.session_bus {
            vars.push((
                "DBUS_SESSION_BUS_ADDRESS".to_string(),
                a11y::session_bus_address_for(self.display),
            ));
        }
        if let Some(auth) = crate::x_auth::installed() {
            vars.push((
                "XAUTHORITY".to_string(),
                auth.desktop_file().display().to_string(),
            ));
        }
        vars
    }

    /// [`ScreenEnv::vars`] for what the agent's `shell` starts: the same,
    /// but with the screen's untrusted X cookie (see [`crate::x_auth`]).
    pub fn agent_vars(&self) -> Vec<(String, String)> {
        let mut vars = self.vars();
        if let Some(auth) = crate::x_auth::installed() {
            for (name, value) in &mut vars {
                if name == "XAUTHORITY" {
                    *value = auth.agent_file(self.display).display().to_string();
                }
            }
        }
        vars
    }

    /// Sets [`ScreenEnv::vars`] on `cmd`, and clears what would hide the
    /// app's tree or send it to another screen's bus.
    pub fn apply(&self, cmd: &mut tokio::process::Command) {
        for name in ["NO_AT_BRIDGE", "AT_SPI_BUS_ADDRESS"] {
            cmd.env_remove(name);
        }
        if !self.session_bus {
            cmd.env_remove("DBUS_SESSION_BUS_ADDRESS");
        }
        cmd.envs(self.vars());
    }

    /// [`ScreenEnv::apply`] for a `std` command.
    pub fn apply_std(&self, cmd: &mut std::process::Command) {
        for name in ["NO_AT_BRIDGE", "AT_SPI_BUS_ADDRESS"] {
            cmd.env_remove(name);
        }
        if !self.session_bus {
            cmd.env_remove("DBUS_SESSION_BUS_ADDRESS");
        }
        cmd.envs(self.vars());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_screen_with_a_bus_names_it() {
        let vars = ScreenEnv {
            display: 7,
            session_bus: true,
        }
        .vars();
        let get = |name: &str| {
            vars.iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(get("DISPLAY"), Some(":7"));
        assert_eq!(get("QT_LINUX_ACCESSIBILITY_ALWAYS_ON"), Some("1"));
        assert_eq!(
            get("DBUS_SESSION_BUS_ADDRESS"),
            Some(a11y::session_bus_address_for(7).as_str())
        );
        assert!(get("NO_AT_BRIDGE").is_none());
    }

    #[test]
    fn a_screen_without_a_bus_names_none() {
        let vars = ScreenEnv {
            display: 7,
            session_bus: false,
        }
        .vars();
        assert!(vars.iter().all(|(k, _)| k != "DBUS_SESSION_BUS_ADDRESS"));
    }
}
