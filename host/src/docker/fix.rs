//! The fix of each problem `doctor` finds that can also make `start_computer`
//! fail, written once: the check prints it, and the error of the tool call
//! (built in [`super::error`]) ends with it, followed by [`RUN_DOCTOR`].

/// The engine does not answer at the endpoint in use.
pub const ENGINE_UNREACHABLE: &str =
    "start Docker, or point DOCKER_HOST or DOCKER_CONTEXT at a running engine";

/// The endpoint cannot be worked out from the environment.
pub const ENDPOINT: &str = "set DOCKER_HOST to the engine's address (such as `unix:///var/run/docker.sock`), or choose a context with `docker context use <name>`";

/// A release build cannot pull its image with the current login.
pub const PULL_DENIED: &str = "if the registry needs a login, run `docker login ghcr.io -u <github-user>` with a token that has the `read:packages` scope, or set COMPUTER_USE_IMAGE to an image you have";

/// A dev build lacks its image; dev builds never pull.
pub const DEV_IMAGE_MISSING: &str = "build it with `just image` (or `bash scripts/build-image.sh`), or set COMPUTER_USE_IMAGE to an image you have";

/// A host port the computer needs is taken by another program.
pub const PORT_TAKEN: &str = "stop what uses it, or set COMPUTER_USE_PORT_BASE to another first port (1024 to 65519; the computer takes it and the 16 after it)";

/// What every such error adds, so the user finds the rest of the checks.
pub const RUN_DOCTOR: &str = "run `computer-use-mcp doctor` to check the whole setup";
