//! Micro-benchmark of capture and input on a real Xvnc (not a timed test):
//! medians of grabbing a 1280x800 desktop (shared memory and plain
//! `GetImage`), fingerprinting, PNG encoding (the chosen setting beside the
//! alternatives, and beside the RGB `Fastest + Up` PNG used before), and
//! the overhead of input actions. PNGs are measured on two desktops:
//! issue 12's (Fluxbox and one xterm of `ls -l /usr/bin | head -50`) and a
//! fuller one (two terminals, 300 lines of listing).
//!
//! Run in release: `cargo run --release -p computerd --example capture_bench`.
//! Needs `apt-get install tigervnc-standalone-server xterm fluxbox`.

#[path = "../tests/support/xvnc.rs"]
mod xvnc;

use computer_protocol::{Action, Button, ScrollDirection};
use computerd::capture::{encode_png, index_colours, Capturer, Frame};
use computerd::display::Display;
use computerd::input::Input;
use computerd::windows::focus_window;
use std::time::{Duration, Instant};
use test_support::wait_until_blocking;
use xvnc::Xvnc;

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

/// How a PNG candidate lays out its pixels.
#[derive(Clone, Copy)]
enum Layout {
    Rgb,
    /// Palette indices, when the frame has at most 256 colours.
    Indexed,
}

/// A PNG the way a candidate setting writes it; `None` when an indexed
/// layout does not fit the frame. Indexing is part of the timed work.
fn encode_with(
    frame: &Frame,
    layout: Layout,
    compression: png::DeflateCompression,
    filter: png::Filter,
) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(frame.rgb.len() / 20);
    let mut encoder = png::Encoder::new(&mut out, frame.width, frame.height);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_deflate_compression(compression);
    encoder.set_filter(filter);
    let indexed;
    let data = match layout {
        Layout::Rgb => {
            encoder.set_color(png::ColorType::Rgb);
            &frame.rgb
        }
        Layout::Indexed => {
            indexed = index_colours(&frame.rgb)?;
            encoder.set_color(png::ColorType::Indexed);
            encoder.set_palette(indexed.palette.clone());
            &indexed.indices
        }
    };
    let mut writer = encoder.write_header().expect("header");
    writer.write_image_data(data).expect("data");
    writer.finish().expect("finish");
    Some(out)
}

/// The PNG computerd sent before issue 12's item 6: RGB, fdeflate's
/// fastest mode, the `Up` filter.
fn encode_before(frame: &Frame) -> Vec<u8> {
    encode_with(
        frame,
        Layout::Rgb,
        png::DeflateCompression::FdeflateUltraFast,
        png::Filter::Up,
    )
    .expect("RGB always fits")
}

/// Issue 12's desktop: Fluxbox and one xterm listing `/usr/bin`.
fn issue_desktop(xvnc: &Xvnc, display: &Display) -> Vec<xvnc::Program> {
    let mut programs = vec![xvnc.start_fluxbox(display)];
    let mut listing = xvnc.command("xterm");
    listing.args(["-T", "issue", "-geometry", "100x52+20+20", "-e", "sh", "-c"]);
    listing.arg("ls -l /usr/bin | head -50; exec sleep 3600");
    programs.push(xvnc.spawn(listing));
    wait_until_blocking("the terminal", Duration::from_secs(10), || {
        focus_window(display, "issue").ok()?.then_some(())
    });
    settle(display);
    programs
}

/// Waits until two grabs a moment apart agree.
fn settle(display: &Display) {
    let mut capturer = Capturer::new(display);
    let mut last = 0;
    wait_until_blocking("the desktop to settle", Duration::from_secs(10), || {
        let now = capturer.grab(display).ok()?.fingerprint();
        let settled = now == last;
        last = now;
        std::thread::sleep(Duration::from_millis(150));
        settled.then_some(())
    });
}

/// Before and after side by side, then every candidate, on one frame.
fn png_table(name: &str, frame: &Frame, display: &Display, capturer: &mut Capturer) {
    use png::DeflateCompression::{FdeflateUltraFast, Level};
    use png::Filter::{Adaptive, NoFilter, Paeth, Sub, Up};
    let colours = index_colours(&frame.rgb).map_or("over 256".to_string(), |i| {
        (i.palette.len() / 3).to_string()
    });
    println!(
        "\nPNG of {name}, {}x{}, {colours} colours (median ms, bytes)",
        frame.width, frame.height
    );
    let before = time_ms(GRABS / 2, || drop(encode_before(frame)));
    let before_bytes = encode_before(frame).len();
    let after = time_ms(GRABS / 2, || drop(encode_png(frame).expect("encode")));
    let after_bytes = encode_png(frame).expect("encode").len();
    let grab_after = time_ms(GRABS / 2, || {
        let frame = capturer.grab(display).expect("grab");
        drop(encode_png(&frame).expect("encode"));
    });
    println!("  before: RGB, Fastest + Up             {before:8.3}   {before_bytes}");
    println!("  after: encode_png                     {after:8.3}   {after_bytes}");
    println!("  after: grab + encode_png              {grab_after:8.3}");
    println!("  candidates:");
    for (label, layout, compression, filter) in [
        ("RGB, fdeflate + Sub", Layout::Rgb, FdeflateUltraFast, Sub),
        (
            "RGB, fdeflate + Paeth",
            Layout::Rgb,
            FdeflateUltraFast,
            Paeth,
        ),
        (
            "RGB, fdeflate + Adaptive",
            Layout::Rgb,
            FdeflateUltraFast,
            Adaptive,
        ),
        ("RGB, zlib 1 + Up", Layout::Rgb, Level(1), Up),
        ("RGB, zlib 1 + Adaptive", Layout::Rgb, Level(1), Adaptive),
        ("RGB, zlib 6 + Adaptive", Layout::Rgb, Level(6), Adaptive),
        (
            "indexed, fdeflate + None",
            Layout::Indexed,
            FdeflateUltraFast,
            NoFilter,
        ),
        (
            "indexed, fdeflate + Up",
            Layout::Indexed,
            FdeflateUltraFast,
            Up,
        ),
        (
            "indexed, zlib 1 + None",
            Layout::Indexed,
            Level(1),
            NoFilter,
        ),
        ("indexed, zlib 1 + Up", Layout::Indexed, Level(1), Up),
        (
            "indexed, zlib 2 + None",
            Layout::Indexed,
            Level(2),
            NoFilter,
        ),
        (
            "indexed, zlib 3 + None",
            Layout::Indexed,
            Level(3),
            NoFilter,
        ),
        (
            "indexed, zlib 6 + None",
            Layout::Indexed,
            Level(6),
            NoFilter,
        ),
        (
            "indexed, zlib 9 + None",
            Layout::Indexed,
            Level(9),
            NoFilter,
        ),
    ] {
        let Some(bytes) = encode_with(frame, layout, compression, filter) else {
            println!("  {label:<36} (over 256 colours)");
            continue;
        };
        let ms = time_ms(GRABS / 2, || {
            drop(encode_with(frame, layout, compression, filter))
        });
        println!("  {label:<36} {ms:8.3}   {}", bytes.len());
    }
    // To look at what was measured: CAPTURE_BENCH_PNG=/tmp/desktop
    if let Some(prefix) = std::env::var_os("CAPTURE_BENCH_PNG") {
        let mut path = std::path::PathBuf::from(prefix);
        path.as_mut_os_string()
            .push(format!("-{}.png", name.replace(' ', "-")));
        std::fs::write(path, encode_png(frame).expect("encode")).expect("write the PNG");
    }
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
    wait_until_blocking("both terminals", Duration::from_secs(10), || {
        (focus_window(display, "listing").ok()? && focus_window(display, "sink").ok()?)
            .then_some(())
    });
    settle(display);
    programs
}

fn main() {
    {
        let xvnc = Xvnc::start();
        let display = xvnc.connect();
        let _programs = issue_desktop(&xvnc, &display);
        let mut capturer = Capturer::new(&display);
        let frame = capturer.grab(&display).expect("grab");
        png_table("the issue desktop", &frame, &display, &mut capturer);
    }

    let xvnc = Xvnc::start();
    let display = xvnc.connect();
    let _programs = desktop(&xvnc, &display);

    let mut shm = Capturer::new(&display);
    let frame = shm.grab(&display).expect("grab");
    assert!(shm.uses_shm(), "MIT-SHM should work on a local Xvnc");
    let mut plain = Capturer::without_shm(&display);

    println!(
        "\ncapture and encode, {}x{}, median of {GRABS} (ms)",
        frame.width, frame.height
    );
    let grab_shm = time_ms(GRABS, || drop(shm.grab(&display).expect("grab")));
    let grab_plain = time_ms(GRABS, || drop(plain.grab(&display).expect("grab")));
    let fingerprint = time_ms(GRABS, || {
        std::hint::black_box(frame.fingerprint());
    });
    let colours = time_ms(GRABS, || drop(index_colours(&frame.rgb)));
    println!("  grab, MIT-SHM            {grab_shm:8.3}");
    println!("  grab, plain GetImage     {grab_plain:8.3}");
    println!("  fingerprint              {fingerprint:8.3}");
    println!("  index_colours            {colours:8.3}");
    png_table("the fuller desktop", &frame, &display, &mut shm);

    // A frame of many colours (a photo, a scaled frame): the palette
    // bails out and the RGB PNG is written.
    let noisy = Frame {
        width: frame.width,
        height: frame.height,
        rgb: frame
            .rgb
            .iter()
            .enumerate()
            .map(|(i, b)| b ^ (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[3] & 0x0f)
            .collect(),
    };
    let bail = time_ms(GRABS, || drop(index_colours(&noisy.rgb)));
    let before = time_ms(GRABS / 2, || drop(encode_before(&noisy)));
    let after = time_ms(GRABS / 2, || drop(encode_png(&noisy).expect("encode")));
    println!("\nPNG of a frame of many colours (median ms)");
    println!("  index_colours bails out  {bail:8.3}");
    println!("  before: RGB, Fastest + Up {before:7.3}");
    println!("  after: encode_png        {after:8.3}");

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
    run("type `a`", &|_| Action::Type {
        text: "a".into(),
        secret: false,
    });
    run("type `é` (bound keycode)", &|_| Action::Type {
        text: "é".into(),
        secret: false,
    });
    run("type 40 ASCII chars", &|_| Action::Type {
        text: "the quick brown fox jumps over the lazy\n".into(),
        secret: false,
    });
}
