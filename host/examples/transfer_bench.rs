//! Benchmark of `file_transfer` beside `docker cp`, in the same run on the
//! same computer: 1 GiB as one file and as 20 000 small files, each way,
//! with the host's peak memory. Run with `bash scripts/bench-transfer.sh`
//! (release build, the `computer-use-mcp:dev` image).
//!
//! The real host binary (next to this example) serves MCP over stdio to
//! rmcp's client, as an agent's client would. Its peak RSS per transfer is
//! read from `/proc/<pid>/status` (`VmHWM`), reset before each transfer
//! through `/proc/<pid>/clear_refs`; `docker cp`'s from its rusage.
//!
//! Options: `--runs N` (3), `--dir PATH` (a scratch folder, default under
//! the system temp folder; needs about 2 GiB plus 4 GiB a run free), `--keep-data`, and
//! `--image TAG` (default `computer-use-mcp:dev`), `--only one|many` to
//! measure one case.

// Each bench uses part of the shared file.
#[allow(dead_code)]
#[path = "support/bench.rs"]
mod bench;

use bench::docker_ok;

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};
use std::fs;
use std::io::Write;
use std::net::{Ipv4Addr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const GIB: u64 = 1 << 30;
const SMALL_FILES: u64 = 20_000;
const FOLDERS: u64 = 200;

type Client = RunningService<RoleClient, ()>;

struct Options {
    runs: usize,
    image: String,
    only: Option<String>,
    dir: PathBuf,
    keep_data: bool,
}

fn options() -> Options {
    let mut o = Options {
        runs: 3,
        image: "computer-use-mcp:dev".into(),
        only: None,
        dir: std::env::temp_dir().join("computer-use-transfer-bench"),
        keep_data: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runs" => o.runs = args.next().and_then(|v| v.parse().ok()).expect("--runs N"),
            "--dir" => o.dir = PathBuf::from(args.next().expect("--dir PATH")),
            "--keep-data" => o.keep_data = true,
            "--image" => o.image = args.next().expect("--image TAG"),
            "--only" => o.only = Some(args.next().expect("--only one|many")),
            other => panic!(
                "unknown option `{other}`; options: --runs N, --dir PATH, --keep-data, --image TAG, --only one|many"
            ),
        }
    }
    o
}

/// Writes out every file's dirty data, the computer's home volume's too
/// (it lives on this machine's disk).
fn sync() {
    let status = Command::new("sync").status().expect("sync runs");
    assert!(status.success(), "sync failed");
}

/// Runs a command to its end; its wall time and peak RSS in bytes.
fn timed(cmd: &mut Command) -> (Duration, u64) {
    let started = Instant::now();
    // Reaped by wait4 below, which also reports its peak memory.
    #[allow(clippy::zombie_processes)]
    let child = cmd.stdout(Stdio::null()).spawn().expect("command starts");
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it in for our child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waiting for our own child with valid pointers.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    let took = started.elapsed();
    assert!(
        pid > 0 && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{cmd:?} failed"
    );
    (took, usage.ru_maxrss as u64 * 1024)
}

/// Pseudo-random bytes (xorshift), so nothing on the way can compress them.
fn fill(buffer: &mut [u8], seed: u64) {
    let mut x = seed | 1;
    for chunk in buffer.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        chunk.copy_from_slice(&x.to_le_bytes()[..chunk.len()]);
    }
}

fn make_data(dir: &Path) {
    let big = dir.join("big.bin");
    if fs::metadata(&big).map(|m| m.len()).ok() != Some(GIB) {
        let mut file = std::io::BufWriter::new(fs::File::create(&big).unwrap());
        let mut buffer = vec![0u8; 1 << 20];
        for i in 0..(GIB >> 20) {
            fill(&mut buffer, i + 1);
            file.write_all(&buffer).unwrap();
        }
        file.flush().unwrap();
    }
    let many = dir.join("many");
    let size = (GIB / SMALL_FILES) as usize;
    let last = many.join(format!("d{:03}/f{:05}", FOLDERS - 1, SMALL_FILES - 1));
    if fs::metadata(&last).map(|m| m.len()).ok() != Some(size as u64) {
        let _ = fs::remove_dir_all(&many);
        let mut buffer = vec![0u8; size];
        for i in 0..SMALL_FILES {
            let folder = many.join(format!("d{:03}", i % FOLDERS));
            fs::create_dir_all(&folder).unwrap();
            fill(&mut buffer, i + 7);
            fs::write(folder.join(format!("f{i:05}")), &buffer).unwrap();
        }
    }
}

fn free_port_base() -> u16 {
    for _ in 0..500 {
        let base = 20000 + (rand::random::<u16>() % 700) * 17;
        if (base..base + 17).all(|p| TcpListener::bind((Ipv4Addr::LOCALHOST, p)).is_ok()) {
            return base;
        }
    }
    panic!("no free block of 17 ports on 127.0.0.1");
}

fn vm_hwm(pid: u32) -> u64 {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/<pid>/status");
    kb * 1024
}

fn reset_hwm(pid: u32) {
    // "5" resets the peak RSS (Linux 4.0 and later).
    fs::write(format!("/proc/{pid}/clear_refs"), "5").expect("clear_refs is writable");
}

async fn transfer(client: &Client, args: Value) -> Value {
    let args = args.as_object().cloned().unwrap();
    let result = client
        .call_tool(CallToolRequestParams::new("file_transfer").with_arguments(args))
        .await
        .expect("file_transfer call");
    assert!(
        result.is_error != Some(true),
        "file_transfer failed: {:?}",
        result.content
    );
    result.structured_content.unwrap_or(Value::Null)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

/// Removes the bench's computer and its home volume however the run ends.
struct Computer(String);

impl Drop for Computer {
    fn drop(&mut self) {
        let _ = Command::new("docker")
            .args(["rm", "-f", "-v", &self.0, &format!("{}-network", self.0)])
            .output();
        let _ = Command::new("docker")
            .args(["volume", "rm", "-f", &format!("{}-home", self.0)])
            .output();
    }
}

struct Row {
    label: String,
    ours: Vec<Duration>,
    cp: Vec<Duration>,
    ours_rss: u64,
    cp_rss: u64,
}

#[tokio::main]
async fn main() {
    let o = options();
    let data = o.dir.join("data");
    let out = o.dir.join("out");
    fs::create_dir_all(&data).unwrap();
    eprintln!(
        "bench: making 1 GiB as one file and as {SMALL_FILES} files in {}",
        data.display()
    );
    make_data(&data);
    docker_ok(&["image", "inspect", &o.image]);

    let name = format!("cu-bench-{:08x}", rand::random::<u32>());
    let _computer = Computer(name.clone());
    let port_base = free_port_base();
    let host_bin = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("computer-use-mcp");
    let mut cmd = tokio::process::Command::new(&host_bin);
    cmd.env("COMPUTER_USE_NAME", &name)
        .env("COMPUTER_USE_PORT_BASE", port_base.to_string())
        .env("COMPUTER_USE_OPEN", "none")
        // A release build would otherwise pull the published image.
        .env("COMPUTER_USE_IMAGE", &o.image);
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::inherit())
        .spawn()
        .expect("host binary starts");
    let pid = transport.id().expect("pid");
    let client: Client = ().serve(transport).await.expect("MCP handshake");
    let started = client
        .call_tool(
            CallToolRequestParams::new("start_computer").with_arguments(
                json!({"title": "transfer bench"})
                    .as_object()
                    .cloned()
                    .unwrap(),
            ),
        )
        .await
        .expect("start_computer");
    let sid = started
        .structured_content
        .as_ref()
        .and_then(|v| v["session_id"].as_str())
        .unwrap_or_else(|| panic!("start_computer failed: {:?}", started.content))
        .to_string();
    let idle_rss = vm_hwm(pid);
    let root_sh = |script: &str| docker_ok(&["exec", "-u", "0", &name, "bash", "-c", script]);
    root_sh("mkdir -p /home/computer/bench/mcp /home/computer/bench/cp && chown -R computer: /home/computer/bench");

    let mut rows = Vec::new();
    let cases = [
        ("one", "big.bin", "1 GiB, one file"),
        ("many", "many", "1 GiB, 20 000 files"),
    ];
    for (case, item, label) in cases {
        if o.only.as_deref().is_some_and(|only| only != case) {
            continue;
        }
        let mut up = Row {
            label: format!("{label}, to computer"),
            ours: vec![],
            cp: vec![],
            ours_rss: 0,
            cp_rss: 0,
        };
        let mut down = Row {
            label: format!("{label}, from computer"),
            ours: vec![],
            cp: vec![],
            ours_rss: 0,
            cp_rss: 0,
        };
        for run in 0..o.runs {
            // Alternate which goes first, so neither always meets a warmer cache.
            let ours_first = run % 2 == 0;
            // Each run copies into folders of its own, and nothing is deleted
            // until the case ends: ext4 skips inodes deleted in the last
            // minute when it allocates, so a copy made right after deleting
            // the last one pays for scanning past 20 000 of them, and which
            // tool meets that depends on the order, not on the tool.
            let (mcp_in, cp_in) = (
                format!("/home/computer/bench/mcp/run{run}"),
                format!("/home/computer/bench/cp/run{run}"),
            );
            root_sh(&format!(
                "mkdir -p {mcp_in} {cp_in} && chown computer: {mcp_in} {cp_in}"
            ));
            for ours in [ours_first, !ours_first] {
                // The last copy's data written out first, so its writeback
                // does not take this one's CPU.
                sync();
                if ours {
                    reset_hwm(pid);
                    let t = Instant::now();
                    transfer(&client, json!({"session_id": sid, "direction": "to_computer",
                        "host_path": data.join(item).display().to_string(), "computer_path": mcp_in})).await;
                    up.ours.push(t.elapsed());
                    up.ours_rss = up.ours_rss.max(vm_hwm(pid));
                } else {
                    let (took, rss) = timed(Command::new("docker").args([
                        "cp",
                        &data.join(item).display().to_string(),
                        &format!("{name}:{cp_in}/"),
                    ]));
                    up.cp.push(took);
                    up.cp_rss = up.cp_rss.max(rss);
                }
            }
            let (mcp_out, cp_out) = (
                out.join(format!("run{run}/mcp")),
                out.join(format!("run{run}/cp")),
            );
            fs::create_dir_all(&mcp_out).unwrap();
            fs::create_dir_all(&cp_out).unwrap();
            for ours in [ours_first, !ours_first] {
                sync();
                if ours {
                    reset_hwm(pid);
                    let t = Instant::now();
                    transfer(&client, json!({"session_id": sid, "direction": "from_computer",
                        "host_path": mcp_out.display().to_string(), "computer_path": format!("{mcp_in}/{item}")})).await;
                    down.ours.push(t.elapsed());
                    down.ours_rss = down.ours_rss.max(vm_hwm(pid));
                } else {
                    let (took, rss) = timed(Command::new("docker").args([
                        "cp",
                        &format!("{name}:{cp_in}/{item}"),
                        &cp_out.display().to_string(),
                    ]));
                    down.cp.push(took);
                    down.cp_rss = down.cp_rss.max(rss);
                }
            }
            eprintln!("bench: {item} run {} of {} done", run + 1, o.runs);
        }
        root_sh("rm -rf /home/computer/bench/mcp/* /home/computer/bench/cp/*");
        let _ = fs::remove_dir_all(&out);
        rows.push(up);
        rows.push(down);
    }
    let _ = client.cancel().await;
    docker_ok(&["rm", "-f", "-v", &name, &format!("{name}-network")]);
    let _ = Command::new("docker")
        .args(["volume", "rm", "-f", &format!("{name}-home")])
        .output();
    let _ = fs::remove_dir_all(&out);
    if !o.keep_data {
        let _ = fs::remove_dir_all(&data);
    }

    println!("file_transfer (MCP, real host binary) vs docker cp: medians of {} runs, same computer, same run", o.runs);
    println!("| case | file_transfer | docker cp | docker cp / file_transfer | host peak RSS (file_transfer) | docker CLI peak RSS |");
    println!("| --- | --- | --- | --- | --- | --- |");
    let mut worst_rss = 0;
    for row in &rows {
        let (ours, cp) = (median(row.ours.clone()), median(row.cp.clone()));
        worst_rss = worst_rss.max(row.ours_rss);
        println!(
            "| {} | {:.2} s ({:.0} MB/s) | {:.2} s ({:.0} MB/s) | {:.2}x | {} | {} |",
            row.label,
            ours.as_secs_f64(),
            GIB as f64 / 1e6 / ours.as_secs_f64(),
            cp.as_secs_f64(),
            GIB as f64 / 1e6 / cp.as_secs_f64(),
            cp.as_secs_f64() / ours.as_secs_f64(),
            mb(row.ours_rss),
            mb(row.cp_rss)
        );
    }
    println!(
        "host binary RSS: {} after start_computer, {} at most during a transfer (target: under 64 MB); ratio above 1 means file_transfer is faster",
        mb(idle_rss),
        mb(worst_rss)
    );
}
