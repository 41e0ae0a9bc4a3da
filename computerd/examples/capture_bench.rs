//! Micro-benchmark of capture and input on a real Xvnc (not a timed test):
//! medians of grabbing a 1280x800 desktop (shared memory and plain
//! `GetImage`), fingerprinting, PNG encoding (the chosen setting beside the
//! alternatives), and the overhead of input actions.
//!
//! Run in release: `cargo run --release -p computerd --example capture_bench`.
//! Needs `apt-get install tigervnc-standalone-server xterm fluxbox`.

#[path = "../tests/support/xvnc.rs"]
mod xvnc;

use computer_protocol::{Action, Button, ScrollDirection};
use computerd::capture::{encode_png, Capturer, Frame};
use computerd::display::Display;
use computerd::input::{focus_window, Input};
use std::time::{Duration, Instant};
use xvnc::{wait_for, Xvnc};

const GRABS: usize = 60;
const ACTIONS: usize = 200;

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(|a, b| a.total_cmp(b));
    samples[samples.len() / 2]
}

/// Median milliseconds of `runs` calls of `f`.
fn time_ms(runs: usize, mut f: impl FnMut()) -> f64 {
    median(
        (0..runs)
            .map(|_| {
                let started = Instant::now();
                f();
                started.elapsed().as_secs_f64() * 1000.0
            })
            .collect(),
    )
}

fn encode_with(frame: &Frame, compression: png::Compression, filter: png::Filter) -> Vec<u8> {
    let mut out = Vec::with_capacity(frame.rgb.len() / 8);
    let mut encoder = png::Encoder::new(&mut out, frame.width, frame.height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(compression);
    encoder.set_filter(filter);
    let mut writer = encoder.write_header().expect("header");
    writer.write_image_data(&frame.rgb).expect("data");
    writer.finish().expect("finish");
    out
}

/// A desktop like an agent's: Fluxbox with its toolbar, a terminal full of
/// text, and one that takes the benchmark's typing.
fn desktop(xvnc: &Xvnc, display: &Display) -> Vec<xvnc::Program> {
    let mut programs = vec![xvnc.start_fluxbox(display)];
    let mut listing = xvnc.command("xterm");
    listing.args([
        "-T",
        "listing",
        "-geometry",
        "120x45+20+20",
        "-e",
        "sh",
        "-c",
    ]);
    listing.arg("ls -la /usr/bin /usr/lib | head -300; cat /etc/os-release; exec sleep 3600");
    programs.push(xvnc.spawn(listing));
    let mut sink = xvnc.command("xterm");
    sink.args([
        "-T",
        "sink",
        "-geometry",
        "60x10+700+500",
        "-e",
        "sh",
        "-c",
        "exec cat > /dev/null",
    ]);
    programs.push(xvnc.spawn(sink));
    wait_for("both terminals", Duration::from_secs(10), || {
        (focus_window(display, "listing").ok()? && focus_window(display, "sink").ok()?)
            .then_some(())
    });
    // Settled: two grabs a moment apart agree.
    let mut capturer = Capturer::new(display);
    let mut last = 0;
    wait_for("the desktop to settle", Duration::from_secs(10), || {
        let now = capturer.grab(display).ok()?.fingerprint();
        let settled = now == last;
        last = now;
        std::thread::sleep(Duration::from_millis(100));
        settled.then_some(())
    });
    programs
}

fn main() {
    let xvnc = Xvnc::start();
    let display = xvnc.connect();
    let _programs = desktop(&xvnc, &display);

    let mut shm = Capturer::new(&display);
    let frame = shm.grab(&display).expect("grab");
    assert!(shm.uses_shm(), "MIT-SHM should work on a local Xvnc");
    let mut plain = Capturer::without_shm(&display);

    println!(
        "capture and encode, {}x{}, median of {GRABS} (ms)",
        frame.width, frame.height
    );
    let grab_shm = time_ms(GRABS, || drop(shm.grab(&display).expect("grab")));
    let grab_plain = time_ms(GRABS, || drop(plain.grab(&display).expect("grab")));
    let fingerprint = time_ms(GRABS, || {
        std::hint::black_box(frame.fingerprint());
    });
    let encode = time_ms(GRABS, || drop(encode_png(&frame).expect("encode")));
    let both = time_ms(GRABS, || {
        let frame = shm.grab(&display).expect("grab");
        drop(encode_png(&frame).expect("encode"));
    });
    let png = encode_png(&frame).expect("encode");
    let png_bytes = png.len();
    // To look at what was measured: CAPTURE_BENCH_PNG=/tmp/desktop.png
    if let Some(path) = std::env::var_os("CAPTURE_BENCH_PNG") {
        std::fs::write(path, &png).expect("write the PNG");
    }
    println!("  grab, MIT-SHM            {grab_shm:8.3}");
    println!("  grab, plain GetImage     {grab_plain:8.3}");
    println!("  fingerprint              {fingerprint:8.3}");
    println!("  encode_png               {encode:8.3}   {png_bytes} bytes");
    println!("  grab + encode_png        {both:8.3}");

    println!("\nPNG settings on this frame (ms, bytes)");
    for (name, compression, filter) in [
        (
            "Fastest + Up (chosen)",
            png::Compression::Fastest,
            png::Filter::Up,
        ),
        ("Fastest + Sub", png::Compression::Fastest, png::Filter::Sub),
        ("Fastest + Avg", png::Compression::Fastest, png::Filter::Avg),
        (
            "Fastest + Adaptive",
            png::Compression::Fastest,
            png::Filter::Adaptive,
        ),
        (
            "Fastest + Paeth",
            png::Compression::Fastest,
            png::Filter::Paeth,
        ),
        (
            "Fast + Adaptive",
            png::Compression::Fast,
            png::Filter::Adaptive,
        ),
        (
            "Balanced + Adaptive",
            png::Compression::Balanced,
            png::Filter::Adaptive,
        ),
    ] {
        let ms = time_ms(GRABS / 2, || drop(encode_with(&frame, compression, filter)));
        let bytes = encode_with(&frame, compression, filter).len();
        println!("  {name:<24} {ms:8.3}   {bytes}");
    }

    let mut input = Input::new(&display).expect("input");
    println!("\ninput actions, median of {ACTIONS} (ms, until the server delivered them)");
    let mut i = 0;
    let mut run = |name: &str, make: &dyn Fn(usize) -> Action| {
        let ms = time_ms(ACTIONS, || {
            i += 1;
            input.perform(&display, &make(i)).expect(name);
        });
        println!("  {name:<24} {ms:8.3}");
    };
    run("move", &|i| Action::move_to(600 + (i % 50) as i32, 300));
    run("click (root window)", &|_| {
        Action::click_at(1200, 400, Button::Left)
    });
    run("scroll 3 steps", &|_| Action::Scroll {
        direction: ScrollDirection::Down,
        steps: 3,
        x: None,
        y: None,
        element: None,
    });
    focus_window(&display, "sink").expect("focus");
    run("key `shift`", &|_| Action::Key {
        key: "shift".into(),
    });
    run("key `ctrl+shift+t`", &|_| Action::Key {
        key: "ctrl+shift+t".into(),
    });
    run("type `a`", &|_| Action::Type { text: "a".into() });
    run("type `é` (bound keycode)", &|_| Action::Type {
        text: "é".into(),
    });
    run("type 40 ASCII chars", &|_| Action::Type {
        text: "the quick brown fox jumps over the lazy\n".into(),
    });
}
