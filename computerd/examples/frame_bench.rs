//! Micro-benchmark of the frames an agent gets (issue 26, item 1), on real
//! Xvnc screens, with the PNG encoder of before beside today's in the same
//! run. Scenes:
//! - a 1280x800 ticking xterm in the core font (the MCP bench's changed
//!   frame; at most 256 colours, so the indexed PNG),
//! - Fluxbox and an xterm in antialiased DejaVu Sans Mono (over 256
//!   colours, the RGB PNG),
//! - a Chromium page of a form at 1280x800,
//! - a 3840x2160 Fluxbox screen with a ticking xterm (the MCP bench's 4K
//!   frame) shaped with the default bounds.
//!
//! Each row: median ms of grab, of encode (`shape` with the default bounds,
//! which also scales the 4K screen), of both, and the PNG bytes; beside
//! them the bytes of a reference encoder on the same frame (a lossless RGB
//! PNG at the `png` crate's strongest setting), and the share of pixels
//! that merging shades moved, with the largest move of a channel.
//!
//! Run in release: `cargo run --release -p computerd --example frame_bench`.
//! Needs `apt-get install tigervnc-standalone-server xterm fluxbox chromium
//! fonts-dejavu-core`. `FRAME_BENCH_PNG=/tmp/f` writes each scene's PNG to
//! look at; `FRAME_BENCH_ONLY=4k` (or ticking, antialiased, chromium,
//! comma-separated) runs those scenes alone; `FRAME_BENCH_PARTS=1` adds
//! the fingerprint, scaling and encoding times of each scene.

#[path = "../tests/support/xvnc.rs"]
mod xvnc;

use computer_protocol::frame::{DEFAULT_MAX_PIXELS, DEFAULT_MAX_SIDE};
use computer_protocol::{FrameOptions, Region};
use computerd::capture::{
    encode_png, encode_png_with, index_colours, shape, Capturer, FilterChoice, Frame, PngSettings,
    RowFilter,
};
use computerd::display::Display;
use computerd::windows::focus_window;
use std::time::{Duration, Instant};
use test_support::wait_until_blocking;
use xvnc::Xvnc;

const RUNS: usize = 30;

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(|a, b| a.total_cmp(b));
    samples[samples.len() / 2]
}

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

/// The PNG computerd wrote before issue 26: indexed with zlib level 3 and no
/// filter when at most 256 colours, else RGB with fdeflate and `Up`.
fn encode_before(frame: &Frame) -> Vec<u8> {
    let mut out = Vec::with_capacity(frame.rgb.len() / 20);
    let mut encoder = png::Encoder::new(&mut out, frame.width, frame.height);
    encoder.set_depth(png::BitDepth::Eight);
    let indexed = index_colours(&frame.rgb);
    let data = match &indexed {
        Some(indexed) => {
            encoder.set_color(png::ColorType::Indexed);
            encoder.set_palette(indexed.palette.clone());
            encoder.set_filter(png::Filter::NoFilter);
            encoder.set_deflate_compression(png::DeflateCompression::Level(3));
            &indexed.indices
        }
        None => {
            encoder.set_color(png::ColorType::Rgb);
            encoder.set_compression(png::Compression::Fastest);
            encoder.set_filter(png::Filter::Up);
            &frame.rgb
        }
    };
    let mut writer = encoder.write_header().expect("header");
    writer.write_image_data(data).expect("data");
    writer.finish().expect("finish");
    out
}

/// The stand-in for another server's encoder: a lossless RGB PNG at the
/// `png` crate's strongest setting (`High`, adaptive filters), which is
/// the best a server writing frames through the `image` crate gets.
fn encode_reference(frame: &Frame) -> Vec<u8> {
    let mut out = Vec::with_capacity(frame.rgb.len() / 10);
    let mut encoder = png::Encoder::new(&mut out, frame.width, frame.height);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_compression(png::Compression::High);
    encoder.set_filter(png::Filter::Adaptive);
    let mut writer = encoder.write_header().expect("header");
    writer.write_image_data(&frame.rgb).expect("data");
    writer.finish().expect("finish");
    out
}

/// Pixels of `png` that differ from `frame`, as a share, and the largest
/// difference of one channel: what merging shades cost.
fn moved(png_bytes: &[u8], frame: &Frame) -> (f64, u8) {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().expect("our PNG");
    let mut rgb = vec![0; reader.output_buffer_size().expect("size")];
    reader.next_frame(&mut rgb).expect("our PNG's pixels");
    let (mut moved, mut most) = (0usize, 0u8);
    for (ours, theirs) in rgb.chunks_exact(3).zip(frame.rgb.chunks_exact(3)) {
        let step = (0..3)
            .map(|c| ours[c].abs_diff(theirs[c]))
            .max()
            .unwrap_or(0);
        moved += usize::from(step > 0);
        most = most.max(step);
    }
    (moved as f64 * 100.0 / (frame.rgb.len() / 3) as f64, most)
}

/// `frame` at `size` the way `shape` scales (Lanczos3); itself when the
/// size is its own.
fn scale(frame: &Frame, size: (u32, u32)) -> std::borrow::Cow<'_, Frame> {
    use fast_image_resize::images::{Image, ImageRef};
    use fast_image_resize::{FilterType, PixelType, ResizeAlg, ResizeOptions, Resizer};
    if size == (frame.width, frame.height) {
        return std::borrow::Cow::Borrowed(frame);
    }
    let source = ImageRef::new(frame.width, frame.height, &frame.rgb, PixelType::U8x3).unwrap();
    let mut target = Image::new(size.0, size.1, PixelType::U8x3);
    let options = ResizeOptions::new().resize_alg(ResizeAlg::Convolution(FilterType::Lanczos3));
    Resizer::new()
        .resize(&source, &mut target, &options)
        .unwrap();
    std::borrow::Cow::Owned(Frame {
        width: size.0,
        height: size.1,
        rgb: target.into_vec(),
    })
}

fn defaults() -> FrameOptions {
    FrameOptions {
        max_side: Some(DEFAULT_MAX_SIDE),
        max_pixels: Some(DEFAULT_MAX_PIXELS),
        ..Default::default()
    }
}

fn whole(frame: &Frame) -> Region {
    Region {
        x: 0,
        y: 0,
        width: frame.width,
        height: frame.height,
    }
}

/// Waits until two grabs a moment apart agree.
fn settle(display: &Display) {
    let mut capturer = Capturer::new(display);
    let mut last = 0;
    wait_until_blocking("the screen to settle", Duration::from_secs(20), || {
        let now = capturer.grab(display).ok()?.fingerprint();
        let settled = now == last;
        last = now;
        std::thread::sleep(Duration::from_millis(300));
        settled.then_some(())
    });
}

fn xterm(
    xvnc: &Xvnc,
    display: &Display,
    title: &str,
    args: &[&str],
    script: &str,
) -> xvnc::Program {
    let mut cmd = xvnc.command("xterm");
    cmd.args(["-T", title])
        .args(args)
        .args(["-e", "sh", "-c", script]);
    let program = xvnc.spawn(cmd);
    wait_until_blocking(title, Duration::from_secs(10), || {
        focus_window(display, title).ok()?.then_some(())
    });
    program
}

/// One scene's row: before and after, same frame. "After" shapes the
/// grab in the server's layout, as `computer_observe` does.
fn row(name: &str, display: &Display, capturer: &mut Capturer) {
    let frame = capturer.grab(display).expect("grab");
    let options = defaults();
    let region = whole(&frame);
    let colours =
        index_colours(&frame.rgb).map_or("over 256".into(), |i| (i.palette.len() / 3).to_string());
    let grab = time_ms(RUNS, || drop(capturer.grab_raw(display).expect("grab")));
    let (after, after_ms) = {
        let grab = capturer.grab_raw(display).expect("grab");
        let after = shape(&grab, region, &options).expect("shape");
        let ms = time_ms(RUNS, || {
            drop(shape(&grab, region, &options).expect("shape"))
        });
        (after, ms)
    };
    let both_ms = time_ms(RUNS, || {
        let grab = capturer.grab_raw(display).expect("grab");
        drop(shape(&grab, region, &options).expect("shape"));
    });
    let t = after.transform;
    // Before: the same scaling as `shape`, then the old encoder.
    let size = (t.frame_width, t.frame_height);
    let before = |frame: &Frame| encode_before(&scale(frame, size));
    let before_ms = time_ms(RUNS, || drop(before(&frame)));
    let before_bytes = before(&frame).len();
    let shown = scale(&frame, size);
    let reference_bytes = encode_reference(&shown).len();
    let (moved_share, moved_most) = moved(&after.bytes, &shown);
    println!(
        "| {name} | {}x{} -> {}x{} | {colours} | {grab:.2} | {before_ms:.2} | {before_bytes} | {after_ms:.2} | {} | {both_ms:.2} | {reference_bytes} | {:.2}x | {moved_share:.3} % by at most {moved_most} |",
        frame.width,
        frame.height,
        t.frame_width,
        t.frame_height,
        after.bytes.len(),
        after.bytes.len() as f64 / reference_bytes as f64,
    );
    if std::env::var_os("FRAME_BENCH_CANDIDATES").is_some() {
        candidates(&scale(&frame, size));
    }
    if std::env::var_os("FRAME_BENCH_PARTS").is_some() {
        let fingerprint = time_ms(RUNS, || {
            std::hint::black_box(frame.fingerprint());
        });
        let scaling = time_ms(RUNS, || drop(scale(&frame, size)));
        let shown = scale(&frame, size);
        let encoding = time_ms(RUNS, || drop(encode_png(&shown).unwrap()));
        let grab = capturer.grab_raw(display).expect("grab");
        let converting = time_ms(RUNS, || drop(grab.to_frame()));
        let halving = time_ms(RUNS, || drop(grab.rows().halved_rgb(region)));
        println!("|   parts: fingerprint {fingerprint:.2} ms, convert {converting:.2} ms, halve {halving:.2} ms, scale (before: on one thread, no halving) {scaling:.2} ms, encode {encoding:.2} ms | | | | | | | | | | | |");
    }
    if let Some(prefix) = std::env::var_os("FRAME_BENCH_PNG") {
        let mut path = std::path::PathBuf::from(prefix);
        path.as_mut_os_string()
            .push(format!("-{}.png", name.replace([' ', ','], "-")));
        std::fs::write(&path, &after.bytes).expect("write the PNG");
        if let Some(raw) = std::env::var_os("FRAME_BENCH_RAW") {
            let mut raw = std::path::PathBuf::from(raw);
            raw.as_mut_os_string().push(format!(
                "-{}-{}x{}.rgb",
                name.replace([' ', ','], "-"),
                frame.width,
                frame.height
            ));
            std::fs::write(raw, &frame.rgb).expect("write the raw frame");
        }
    }
}

/// Other settings on the same (shaped) frame, to choose
/// [`PngSettings::FRAMES`]: `FRAME_BENCH_CANDIDATES=1`.
fn candidates(frame: &Frame) {
    let indexed = index_colours(&frame.rgb).is_some();
    let levels = [1, 2, 3, 4, 5, 6, 9];
    let filters: &[FilterChoice] = if indexed {
        &[FilterChoice::All(RowFilter::None)]
    } else {
        &[
            FilterChoice::All(RowFilter::Up),
            FilterChoice::All(RowFilter::Sub),
            FilterChoice::All(RowFilter::Paeth),
            FilterChoice::Adaptive,
        ]
    };
    for filter in filters {
        for level in levels {
            let settings = PngSettings {
                indexed_level: level,
                rgb_filter: *filter,
                rgb_level: level,
            };
            let ms = time_ms(RUNS / 2, || drop(encode_png_with(frame, settings).unwrap()));
            let bytes = encode_png_with(frame, settings).unwrap().len();
            println!("|   candidate {filter:?} level {level} | | | | | | {ms:.2} | {bytes} | |");
        }
    }
}

/// Whether the scene `key` (ticking, antialiased, chromium, 4k) is asked
/// for: `FRAME_BENCH_ONLY=4k` runs the 3840x2160 scene alone.
fn wanted(key: &str) -> bool {
    std::env::var("FRAME_BENCH_ONLY").map_or(true, |only| only.split(',').any(|k| k == key))
}

fn main() {
    println!("| scene | frame | colours | grab ms | before: encode ms | before: bytes | after: shape ms | after: bytes | after: grab + shape ms | reference: bytes | after / reference | pixels moved |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    if wanted("ticking") {
        let xvnc = Xvnc::start();
        let display = xvnc.connect();
        let _x = xterm(
            &xvnc,
            &display,
            "ticking",
            &["-geometry", "160x50+0+0"],
            "while :; do date +%s.%N; ls -la /usr/bin | head -40; sleep 0.005; done",
        );
        std::thread::sleep(Duration::from_millis(500));
        row("ticking xterm", &display, &mut Capturer::new(&display));
    }
    if wanted("antialiased") {
        let xvnc = Xvnc::start();
        let display = xvnc.connect();
        let _wm = xvnc.start_fluxbox(&display);
        let _x = xterm(
            &xvnc,
            &display,
            "antialiased",
            &[
                "-fa",
                "DejaVu Sans Mono",
                "-fs",
                "11",
                "-geometry",
                "100x40+20+20",
            ],
            "ls -l /usr/bin | head -50; exec sleep 3600",
        );
        settle(&display);
        row(
            "fluxbox + antialiased xterm",
            &display,
            &mut Capturer::new(&display),
        );
    }
    if wanted("chromium") {
        let xvnc = Xvnc::start();
        let display = xvnc.connect();
        let _wm = xvnc.start_fluxbox(&display);
        let page = xvnc.home.path().join("order.html");
        let mut html = String::from("<!doctype html><title>Order form</title><h1>Order</h1><form>");
        for i in 0..12 {
            html.push_str(&format!(
                "<p><label>Field {i} <input name=f{i} value='value {i}'></label> <button>Check {i}</button></p>"
            ));
        }
        html.push_str("</form><p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.</p>");
        std::fs::write(&page, html).expect("page");
        let mut chromium = xvnc.command("chromium");
        chromium
            .args([
                "--no-sandbox",
                "--no-first-run",
                "--disable-gpu",
                "--start-maximized",
            ])
            .arg(format!(
                "--user-data-dir={}",
                xvnc.home.path().join("chromium").display()
            ))
            .arg(format!("file://{}", page.display()));
        let _browser = xvnc.spawn(chromium);
        wait_until_blocking("Chromium", Duration::from_secs(30), || {
            focus_window(&display, "Order form").ok()?.then_some(())
        });
        std::thread::sleep(Duration::from_secs(2));
        settle(&display);
        row("chromium form page", &display, &mut Capturer::new(&display));
    }
    if wanted("4k") {
        let xvnc = Xvnc::start_sized(3840, 2160);
        let display = xvnc.connect();
        let _wm = xvnc.start_fluxbox(&display);
        let _x = xterm(
            &xvnc,
            &display,
            "big",
            &["-geometry", "160x50+0+0"],
            "while :; do date +%s.%N; ls -la /usr/bin | head -40; sleep 0.005; done",
        );
        std::thread::sleep(Duration::from_millis(500));
        row(
            "3840x2160, defaults",
            &display,
            &mut Capturer::new(&display),
        );
    }
}
