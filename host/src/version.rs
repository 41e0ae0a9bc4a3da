//! This build's version and the image it runs unless told otherwise. A
//! leaf: the settings (which default the image) and Docker (which checks
//! labels against the version) both read it.
//!
//! Release builds use the image of their own version and pull it when it is
//! missing. Dev builds use `computer-use-mcp:dev` and never pull, so a dev
//! binary is never paired with a stale published image by accident.

pub const DEV_IMAGE: &str = "computer-use-mcp:dev";
pub const RELEASE_REPOSITORY: &str = "ghcr.io/falleng0d/computer-use-mcp";

/// This binary's version, which the image and container labels are held to.
pub fn binary_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Release builds pull their image when it is missing; dev builds never do.
pub fn pulls_missing_image() -> bool {
    !cfg!(debug_assertions)
}

/// The image when `COMPUTER_USE_IMAGE` is unset.
pub fn default_image() -> String {
    if cfg!(debug_assertions) {
        DEV_IMAGE.to_string()
    } else {
        format!("{RELEASE_REPOSITORY}:{}", binary_version())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::docker::image::compare_versions;
    use std::cmp::Ordering;

    /// The crate registry holds `computer-use-mcp` 0.3.2 from before this
    /// repository: any version at or below it would never be installed.
    #[test]
    fn the_version_is_above_the_one_already_on_the_registry() {
        assert_eq!(
            compare_versions(binary_version(), "0.3.2"),
            Some(Ordering::Greater),
            "the workspace version {} must stay above 0.3.2",
            binary_version()
        );
    }
}
