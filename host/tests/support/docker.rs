//! A real Docker engine and the real `computer-use-mcp:dev` image for the
//! Docker tests: each test owns a container name, a volume and a block of 17
//! free ports, and a guard removes its container and volume however the test
//! ends.

use computer_use_mcp::settings::{process_env, Env};
use std::fs::File;
use std::net::{Ipv4Addr, TcpListener};
use std::path::Path;
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};

/// The image the Docker tests run: `COMPUTER_USE_TEST_IMAGE`, or the dev
/// image. Another tag lets two work trees test their own builds side by side.
pub fn image() -> String {
    std::env::var("COMPUTER_USE_TEST_IMAGE").unwrap_or_else(|_| "computer-use-mcp:dev".into())
}

/// Makes sure an engine answers and the image exists; fails loudly with the
/// fix otherwise. Runs once per test binary.
pub fn require_docker() {
    static READY: OnceLock<Result<(), String>> = OnceLock::new();
    let ready = READY.get_or_init(|| {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/ensure-docker.sh");
        if script.is_file() {
            let out = Command::new("bash").arg(&script).output().map_err(|e| {
                format!("cannot run `bash {}`: {e}", script.display())
            })?;
            if !out.status.success() {
                return Err(format!(
                    "`bash {}` failed ({}): {}\nstart the engine (as root: `dockerd >/var/log/dockerd.log 2>&1 &`) or install it with `apt-get install docker.io`",
                    script.display(),
                    out.status,
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
        }
        let info = docker_cli().args(["info", "--format", "{{.ServerVersion}}"]).output();
        match info {
            Ok(out) if out.status.success() => {}
            Ok(out) => {
                return Err(format!(
                    "the Docker engine does not answer: {}\nstart it with `bash scripts/ensure-docker.sh` (or, as root, `dockerd >/var/log/dockerd.log 2>&1 &`)",
                    String::from_utf8_lossy(&out.stderr)
                ))
            }
            Err(e) => {
                return Err(format!(
                    "cannot run `docker`: {e}; install it with `apt-get install docker.io` and start the engine with `bash scripts/ensure-docker.sh`"
                ))
            }
        }
        let image_tag = image();
        let image = docker_cli().args(["image", "inspect", &image_tag]).output();
        match image {
            Ok(out) if out.status.success() => Ok(()),
            _ => Err(format!(
                "the image `{image_tag}` is missing; build it with `just image` (or `COMPUTER_USE_IMAGE={image_tag} bash scripts/build-image.sh`)"
            )),
        }
    });
    if let Err(why) = ready {
        panic!("{why}");
    }
}

/// The variable that marks the tests' own `docker` commands: over ssh they
/// share one login (the ssh configuration of `scripts/remote-engine.sh`
/// matches it), while the host under test, unmarked, makes its connections
/// as it would for a user.
pub const HARNESS_MARK: &str = "COMPUTER_USE_TEST_HARNESS";

/// A `docker` command of the tests' own, not the host's under test.
pub fn docker_cli() -> Command {
    let mut command = Command::new("docker");
    command.env(HARNESS_MARK, "1");
    command
}

/// Runs `docker <args>` and returns its output, failing the test with the
/// command and its output when it fails.
pub fn docker(args: &[&str]) -> String {
    let out = docker_output(args);
    if !out.status.success() {
        panic!(
            "`docker {}` failed ({}):\nstdout: {}\nstderr: {}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

pub fn docker_output(args: &[&str]) -> Output {
    docker_cli()
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run `docker {}`: {e}", args.join(" ")))
}

/// Where computerd keeps the desktop's X cookie in the image.
pub const DESKTOP_X_COOKIE: &str = "/home/computer/.local/share/computer-use/x-desktop-cookie";

/// Runs `command` in the computer `name` as a program of the desktop on
/// display `:display` (the desktop's X cookie, which the agent's shell does
/// not get): how a test looks at windows as the person sees them.
pub fn desktop_x(name: &str, display: u64, command: &str) -> String {
    docker(&[
        "exec",
        "-e",
        &format!("DISPLAY=:{display}"),
        "-e",
        &format!("XAUTHORITY={DESKTOP_X_COOKIE}"),
        name,
        "bash",
        "-c",
        command,
    ])
}

/// `docker inspect` of a container as JSON.
pub fn inspect(name: &str) -> serde_json::Value {
    let text = docker(&["container", "inspect", name]);
    let mut list: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    list.remove(0)
}

/// `docker inspect` of the container whose network namespace the computer
/// `name` runs in: its network guard, which publishes its ports; the
/// computer itself when it owns its namespace (one made by hand as an
/// older computer).
pub fn inspect_network(name: &str) -> serde_json::Value {
    let computer = inspect(name);
    match computer["HostConfig"]["NetworkMode"]
        .as_str()
        .and_then(|mode| mode.strip_prefix("container:"))
    {
        Some(owner) => inspect(owner),
        None => computer,
    }
}

pub fn exists(name: &str) -> bool {
    docker_output(&["container", "inspect", name])
        .status
        .success()
}

/// A first port whose block of 17 is free on 127.0.0.1 now and was handed to
/// no other test run on this machine.
pub fn free_port_base() -> u16 {
    free_port_blocks(1)
}

/// The first of `blocks` consecutive blocks of 17 ports, all free now and
/// handed to no other test run on this machine: room for a server's
/// tenants, whose computers take the blocks after the base.
///
/// Each block is claimed with a lock on a file named after it, held until
/// this process ends, because test binaries run side by side: CI's HTTP pass
/// and its remote pass (whose hosts bind their tunnels' ports here) each
/// probed a block free, and one's computer then found the other holding it.
/// The kernel drops the locks of a process that dies, so none go stale.
pub fn free_port_blocks(blocks: u16) -> u16 {
    static CLAIMED: Mutex<Vec<File>> = Mutex::new(Vec::new());
    let mut claimed = CLAIMED.lock().unwrap();
    let span = 17 * blocks;
    for _ in 0..200 {
        // Below Linux's ephemeral range (32768 on), where Docker's random API
        // ports and outgoing connections land.
        let base = 20000 + (rand::random::<u16>() % (690 - (blocks - 1))) * 17;
        // A block claimed by another test is not even probed: binding its
        // ports to look would take them from under that test for a moment.
        let Some(claims) = claim_blocks(base, blocks) else {
            continue;
        };
        let free = (base..base + span).all(|p| TcpListener::bind((Ipv4Addr::LOCALHOST, p)).is_ok());
        if free {
            claimed.extend(claims);
            return base;
        }
    }
    panic!("no {blocks} free blocks of 17 ports on 127.0.0.1 between 20000 and 31729");
}

/// Locks the files of the `blocks` blocks from `base`, or none of them when
/// another process (or this one) holds any.
fn claim_blocks(base: u16, blocks: u16) -> Option<Vec<File>> {
    let folder = std::env::temp_dir().join("computer-use-test-port-blocks");
    std::fs::create_dir_all(&folder)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", folder.display()));
    (0..blocks)
        .map(|k| {
            let path = folder.join((base + 17 * k).to_string());
            let file = File::options()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&path)
                .unwrap_or_else(|e| panic!("cannot open {}: {e}", path.display()));
            // A lock is per open file, so this process's own claims refuse
            // a second open of the same block too.
            file.try_lock().ok().map(|()| file)
        })
        .collect()
}

/// A computer name of this test's own, and the guard that removes its
/// container and home volume at the end.
pub struct TestComputer {
    pub name: String,
    pub port_base: u16,
}

impl TestComputer {
    pub fn new() -> TestComputer {
        TestComputer::with_port_blocks(1)
    }

    /// A computer whose port base is followed by `blocks - 1` more free
    /// blocks of 17, for the computers of a server's tenants.
    pub fn with_port_blocks(blocks: u16) -> TestComputer {
        require_docker();
        let suffix: String = (0..8)
            .map(|_| char::from(b'a' + rand::random::<u8>() % 26))
            .collect();
        TestComputer {
            name: format!("cu-test-{suffix}"),
            port_base: free_port_blocks(blocks),
        }
    }

    /// The guard for tenant `tenant`'s computer of a server named after
    /// this one (`<name>-<tenant>`), so its container and home go at the end.
    pub fn tenant(&self, tenant: &str) -> TestComputer {
        TestComputer {
            name: format!("{}-{tenant}", self.name),
            port_base: 0,
        }
    }

    pub fn volume(&self) -> String {
        format!("{}-home", self.name)
    }

    /// The process environment with this computer's name and ports.
    pub fn env(&self) -> Env {
        let mut env = process_env();
        env.insert("COMPUTER_USE_NAME".into(), self.name.clone());
        env.insert("COMPUTER_USE_PORT_BASE".into(), self.port_base.to_string());
        env.insert("COMPUTER_USE_IMAGE".into(), image());
        env
    }

    /// Creates (not starts) a container the way an older or newer release
    /// would have, labelled `version`, on the dev image.
    pub fn create_labelled(&self, version: &str, token: &str) {
        self.create_labelled_with(version, token, &[]);
    }

    /// As [`TestComputer::create_labelled`], with extra `NAME=value`
    /// variables for computerd.
    pub fn create_labelled_with(&self, version: &str, token: &str, env: &[&str]) {
        let mut args: Vec<String> = vec![
            "create".into(),
            "--name".into(),
            self.name.clone(),
            "--label".into(),
            format!("computer-use.version={version}"),
            "-e".into(),
            format!("COMPUTERD_TOKEN={token}"),
            "-e".into(),
            format!("COMPUTER_USE_PORT_BASE={}", self.port_base),
            "-v".into(),
            format!("{}:/home/computer", self.volume()),
            "--shm-size".into(),
            "2g".into(),
            "-p".into(),
            format!("127.0.0.1:{}:6080", self.port_base),
            "-p".into(),
            "127.0.0.1::7070".into(),
        ];
        for e in env {
            args.push("-e".into());
            args.push(e.to_string());
        }
        for n in 1..=16u16 {
            args.push("-p".into());
            args.push(format!("127.0.0.1:{}:{}", self.port_base + n, 5900 + n));
        }
        args.push(image());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        docker(&args);
    }

    /// As [`TestComputer::create_labelled_with`], but as this version makes
    /// a computer: in the network namespace of its guard `<name>-network`
    /// (created here, not started), which publishes the ports.
    pub fn create_in_guard_with(&self, version: &str, token: &str, env: &[&str]) {
        let guard = format!("{}-network", self.name);
        let mut args: Vec<String> = vec![
            "create".into(),
            "--name".into(),
            guard.clone(),
            "--label".into(),
            format!("computer-use.version={version}"),
            "--label".into(),
            format!("computer-use.network-guard-for={}", self.name),
            "--cap-drop".into(),
            "ALL".into(),
            "--cap-add".into(),
            "NET_ADMIN".into(),
            "--user".into(),
            "root".into(),
            "--add-host".into(),
            "host.docker.internal:host-gateway".into(),
            "--entrypoint".into(),
            "/usr/local/bin/computerd".into(),
            "-p".into(),
            format!("127.0.0.1:{}:6080", self.port_base),
            "-p".into(),
            "127.0.0.1::7070".into(),
        ];
        for n in 1..=16u16 {
            args.push("-p".into());
            args.push(format!("127.0.0.1:{}:{}", self.port_base + n, 5900 + n));
        }
        let policy =
            serde_json::to_string(&computer_protocol::network::NetworkPolicy::default()).unwrap();
        args.extend([image(), "net-guard".into(), "run".into(), policy]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        docker(&args);
        let mut args: Vec<String> = vec![
            "create".into(),
            "--name".into(),
            self.name.clone(),
            "--label".into(),
            format!("computer-use.version={version}"),
            "-e".into(),
            format!("COMPUTERD_TOKEN={token}"),
            "-e".into(),
            format!("COMPUTER_USE_PORT_BASE={}", self.port_base),
            "-v".into(),
            format!("{}:/home/computer", self.volume()),
            "--network".into(),
            format!("container:{guard}"),
        ];
        for e in env {
            args.push("-e".into());
            args.push(e.to_string());
        }
        args.push(image());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        docker(&args);
    }

    /// Stops the container quickly; computerd ends on SIGTERM.
    pub fn stop(&self) {
        docker(&["stop", "-t", "5", &self.name]);
    }
}

/// The computer a test binary's tests share when their subject is a session,
/// not the container's life: each such test opens sessions of its own on it,
/// as agents share one computer in production, and none of them pays for
/// making and removing a computer. The first test that asks makes it,
/// before any other can race it to the name or its ports; it is removed
/// when the binary exits (a killed run leaves it to
/// `scripts/sweep-test-leftovers.sh`). Its home is shared too: a test's
/// files there carry names of their own.
pub fn shared_computer() -> &'static TestComputer {
    SHARED.get_or_init(|| {
        let computer = TestComputer::new();
        super::mcp::start_computer_blocking(&computer);
        // SAFETY: `remove_shared` is a plain function that touches only the
        // initialized static and runs `docker` as a child.
        let registered = unsafe { libc::atexit(remove_shared) };
        assert_eq!(
            registered, 0,
            "atexit refused the shared computer's removal"
        );
        computer
    })
}

static SHARED: OnceLock<TestComputer> = OnceLock::new();

extern "C" fn remove_shared() {
    if let Some(computer) = SHARED.get() {
        computer.remove();
    }
}

impl Drop for TestComputer {
    fn drop(&mut self) {
        self.remove();
    }
}

impl TestComputer {
    /// Removes the container, its guard, its home and its snapshots.
    fn remove(&self) {
        // Output ignored: either may already be gone.
        let _ = docker_output(&["rm", "-f", "-v", &self.name]);
        // Its network guard owns the computer's network and outlives it.
        let _ = docker_output(&["rm", "-f", &format!("{}-network", self.name)]);
        let _ = docker_output(&["volume", "rm", "-f", &self.volume()]);
        // Its snapshots, and what a failed restore or save may have left.
        let listed = |args: &[&str]| {
            let out = docker_output(args);
            String::from_utf8_lossy(&out.stdout)
                .split_whitespace()
                .map(str::to_string)
                .collect::<Vec<_>>()
        };
        let snapshot = format!("label=computer-use.snapshot.of={}", self.name);
        let copier = format!("label=computer-use.copier-of={}", self.name);
        let next = format!("name=^/{}-next-", self.name);
        for id in listed(&["ps", "-aq", "--filter", &copier])
            .into_iter()
            .chain(listed(&["ps", "-aq", "--filter", &next]))
        {
            let _ = docker_output(&["rm", "-f", &id]);
        }
        for image in listed(&["images", "-q", "--filter", &snapshot]) {
            let _ = docker_output(&["rmi", "-f", &image]);
        }
        for volume in listed(&["volume", "ls", "-q", "--filter", &snapshot]) {
            let _ = docker_output(&["volume", "rm", "-f", &volume]);
        }
    }
}
