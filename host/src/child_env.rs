//! What the host's own children must not inherit. With `serve --http` the
//! bearer token sits in the host's environment, and every program the host
//! starts (the browser opener and the browser it may start, the TigerVNC
//! viewer, Docker credential helpers) would otherwise receive it and could
//! drive every computer session through the HTTP transport.

use crate::settings::HTTP_TOKEN;

/// Variables removed from the environment of every process the host starts.
pub const HOST_SECRETS: &[&str] = &[HTTP_TOKEN];

/// Clears [`HOST_SECRETS`] from a command before it is spawned.
pub trait WithoutHostSecrets {
    fn without_host_secrets(&mut self) -> &mut Self;
}

impl WithoutHostSecrets for std::process::Command {
    fn without_host_secrets(&mut self) -> &mut Self {
        for var in HOST_SECRETS {
            self.env_remove(var);
        }
        self
    }
}

impl WithoutHostSecrets for tokio::process::Command {
    fn without_host_secrets(&mut self) -> &mut Self {
        for var in HOST_SECRETS {
            self.env_remove(var);
        }
        self
    }
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;

    /// The child's own `env`, with the token set as the host's
    /// environment would hold it.
    fn child_env(cmd: &mut std::process::Command) -> String {
        let out = cmd.output().expect("`env` runs");
        String::from_utf8(out.stdout).expect("utf-8 environment")
    }

    #[test]
    fn a_started_program_does_not_see_the_token() {
        let mut cmd = std::process::Command::new("env");
        cmd.env(HTTP_TOKEN, "0123456789abcdef0123456789abcdef")
            .env("KEPT", "yes");
        cmd.without_host_secrets();
        let env = child_env(&mut cmd);
        assert!(!env.contains(HTTP_TOKEN), "{env}");
        assert!(env.contains("KEPT=yes"), "{env}");
    }

    #[test]
    fn a_tokio_command_is_cleared_too() {
        let mut cmd = tokio::process::Command::new("env");
        cmd.env(HTTP_TOKEN, "x");
        cmd.without_host_secrets();
        let removed = cmd
            .as_std()
            .get_envs()
            .any(|(k, v)| k == HTTP_TOKEN && v.is_none());
        assert!(removed, "the token is not removed");
    }
}
