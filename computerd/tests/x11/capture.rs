//! Capture against a real Xvnc: screenshots, their PNG and fingerprint,
//! grabs of drawn boxes, kept scaled frames and a resized screen. Each test
//! owns its display.

use crate::test_window::{TestWindow, LIMIT};
use crate::xvnc::Xvnc;
use computer_protocol::{FrameOptions, Region};
use computerd::capture::{
    encode_png, shape, shape_kept, Capturer, Drawn, Frame, Rescaler, MOVED_SHARE_MAX,
    SHADE_MOVE_MAX,
};
use computerd::display::Display;
use test_support::wait_until_blocking;
use x11rb::connection::Connection;
use x11rb::protocol::randr;
use x11rb::protocol::xproto::{
    ChangeGCAux, ConnectionExt as _, CreateGCAux, CreateWindowAux, EventMask, Rectangle,
    WindowClass,
};
use x11rb::wrapper::ConnectionExt as _;

fn grab(display: &Display, capturer: &mut Capturer) -> Frame {
    capturer.grab(display).expect("grab")
}

/// Fills a `width` x `height` rectangle at (10, 10) of `window` with the
/// colour of `gc`, and waits until the server has it.
fn fill(conn: &impl Connection, window: u32, gc: u32, width: u16, height: u16) {
    let rect = Rectangle {
        x: 10,
        y: 10,
        width,
        height,
    };
    conn.poly_fill_rectangle(window, gc, &[rect]).expect("fill");
    conn.sync().expect("sync");
}

/// The PNG as 8-bit RGB; an indexed PNG (a screen of few colours) is
/// expanded through its palette.
fn decode_png(png: &[u8]) -> (png::OutputInfo, Vec<u8>) {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(png));
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().expect("PNG header");
    let mut buf = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut buf).expect("PNG data");
    buf.truncate(info.buffer_size());
    (info, buf)
}

#[test]
fn capture_gives_the_screen_as_png_and_the_fingerprint_follows_the_pixels() {
    let xvnc = Xvnc::start();
    let display = xvnc.connect();
    let mut capturer = Capturer::new(&display);

    let first = grab(&display, &mut capturer);
    assert_eq!((first.width, first.height), (1280, 800));
    assert_eq!(first.rgb.len(), 1280 * 800 * 3);
    assert!(
        capturer.uses_shm(),
        "a local Xvnc supports MIT-SHM, so capture should use it"
    );
    let again = grab(&display, &mut capturer);
    assert_eq!(
        first.fingerprint(),
        again.fingerprint(),
        "an unchanged screen gives the same fingerprint"
    );

    let (info, pixels) = decode_png(&encode_png(&first).expect("encode"));
    assert_eq!((info.width, info.height), (1280, 800));
    assert_eq!(
        (info.color_type, info.bit_depth),
        (png::ColorType::Rgb, png::BitDepth::Eight)
    );
    assert_eq!(
        pixels, first.rgb,
        "the PNG holds exactly the captured pixels"
    );

    // A window painted 0x123456, with a rectangle filled 0xabcdef inside:
    // distinct bytes per channel, so a swapped byte order shows.
    let drawn = TestWindow::open(&xvnc, 100, 100, 200, 100, 0x12_3456, EventMask::NO_EVENT);
    let conn = &drawn.display.conn;
    let gc = conn.generate_id().expect("id");
    conn.create_gc(gc, drawn.window, &CreateGCAux::new().foreground(0xab_cdef))
        .expect("gc");
    fill(conn, drawn.window, gc, 50, 30);
    let changed = wait_until_blocking("the drawing to show in a capture", LIMIT, || {
        let frame = grab(&display, &mut capturer);
        (frame.pixel(120, 120) == Some([0xab, 0xcd, 0xef])
            && frame.pixel(250, 180) == Some([0x12, 0x34, 0x56]))
        .then_some(frame)
    });
    assert_eq!(
        changed.pixel(99, 99),
        first.pixel(99, 99),
        "outside the window nothing changed"
    );
    assert_ne!(changed.fingerprint(), first.fingerprint());
    assert_eq!(
        changed.fingerprint(),
        grab(&display, &mut capturer).fingerprint()
    );

    // Plain GetImage sees exactly what shared memory sees.
    let plain = Capturer::without_shm(&display)
        .grab(&display)
        .expect("plain grab");
    assert_eq!(plain.rgb, changed.rgb);

    // A different colour in the rectangle: new fingerprint.
    conn.change_gc(gc, &ChangeGCAux::new().foreground(0xab_cdee))
        .expect("gc");
    fill(conn, drawn.window, gc, 1, 1);
    let recoloured = wait_until_blocking("one changed pixel to show", LIMIT, || {
        let frame = grab(&display, &mut capturer);
        (frame.pixel(110, 110) == Some([0xab, 0xcd, 0xee])).then_some(frame)
    });
    assert_ne!(
        recoloured.fingerprint(),
        changed.fingerprint(),
        "one pixel changes the fingerprint"
    );
}

#[test]
fn the_servers_pixels_tell_a_changed_screen_without_converting() {
    let xvnc = Xvnc::start();
    let display = xvnc.connect();
    let mut capturer = Capturer::new(&display);
    let first = capturer.grab_raw(&display).expect("grab").fingerprint();
    assert_eq!(
        capturer.grab_raw(&display).expect("grab").fingerprint(),
        first,
        "an unchanged screen gives the same fingerprint"
    );
    assert_eq!(
        Capturer::without_shm(&display)
            .grab_raw(&display)
            .expect("plain grab")
            .fingerprint(),
        first,
        "plain GetImage hashes like shared memory"
    );

    // One pixel in the lowest bit of blue is a change.
    let drawn = TestWindow::open(&xvnc, 10, 10, 20, 20, 0x10_2030, EventMask::NO_EVENT);
    let conn = &drawn.display.conn;
    let gc = conn.generate_id().expect("id");
    conn.create_gc(gc, drawn.window, &CreateGCAux::new().foreground(0x10_2031))
        .expect("gc");
    wait_until_blocking("the window to show", LIMIT, || {
        let frame = grab(&display, &mut capturer);
        (frame.pixel(15, 15) == Some([0x10, 0x20, 0x30])).then_some(())
    });
    let before = capturer.grab_raw(&display).expect("grab").fingerprint();
    assert_ne!(before, first);
    fill(conn, drawn.window, gc, 1, 1);
    wait_until_blocking("the one pixel to show", LIMIT, || {
        let frame = grab(&display, &mut capturer);
        // The window's (10, 10) is the screen's (20, 20).
        (frame.pixel(20, 20) == Some([0x10, 0x20, 0x31])).then_some(())
    });
    let grab_now = capturer.grab_raw(&display).expect("grab");
    assert_ne!(grab_now.fingerprint(), before, "one bit of one pixel shows");
    // The grab converts to the frame a plain grab gives.
    let converted = grab_now.to_frame();
    assert_eq!(converted.rgb, grab(&display, &mut capturer).rgb);
}

/// A grab that reads only the boxes DAMAGE reported must give the pixels
/// of a whole-screen `GetImage`, whatever was drawn: fills, windows
/// moved, resized, raised, lowered, unmapped and mapped again, areas
/// copied within a window (as scrolling does). All drawing is done by the
/// server for our own windows, so after a sync the screen is still.
#[test]
fn grabs_that_read_only_drawn_boxes_match_whole_screen_grabs() {
    let xvnc = Xvnc::start();
    let display = xvnc.connect();
    let mut capturer = Capturer::new(&display);
    let mut plain = Capturer::without_shm(&display);
    let painter = xvnc.connect();
    let conn = &painter.conn;
    let mut windows = Vec::new();
    for (i, colour) in [0x20_4060u32, 0x80_a0c0, 0xd0_3010].into_iter().enumerate() {
        let window = conn.generate_id().expect("id");
        let aux = CreateWindowAux::new()
            .background_pixel(colour)
            .override_redirect(1);
        let at = 50 + 120 * i as i16;
        conn.create_window(
            0,
            window,
            display.root,
            at,
            at,
            300,
            200,
            0,
            WindowClass::INPUT_OUTPUT,
            0,
            &aux,
        )
        .expect("create window");
        conn.map_window(window).expect("map");
        let gc = conn.generate_id().expect("id");
        conn.create_gc(gc, window, &CreateGCAux::new()).expect("gc");
        windows.push((window, gc));
    }
    conn.sync().expect("sync");
    assert_eq!(
        grab(&display, &mut capturer).rgb,
        grab(&display, &mut plain).rgb,
        "the first grab"
    );
    assert!(capturer.uses_shm(), "a local Xvnc takes a segment");

    // A small linear congruential generator: the same steps every run.
    let mut seed = 12_345u32;
    let mut next = |below: u32| {
        seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        (seed >> 8) % below
    };
    for step in 0..80 {
        let (window, gc) = windows[next(3) as usize];
        let what = next(7);
        match what {
            0 | 1 => {
                conn.change_gc(gc, &ChangeGCAux::new().foreground(next(0xff_ffff)))
                    .expect("gc");
                let rect = Rectangle {
                    x: next(280) as i16,
                    y: next(180) as i16,
                    width: 1 + next(60) as u16,
                    height: 1 + next(40) as u16,
                };
                conn.poly_fill_rectangle(window, gc, &[rect]).expect("fill");
            }
            2 => {
                let aux = x11rb::protocol::xproto::ConfigureWindowAux::new()
                    .x(next(1100) as i32 - 100)
                    .y(next(700) as i32 - 100);
                conn.configure_window(window, &aux).expect("move");
            }
            3 => {
                let aux = x11rb::protocol::xproto::ConfigureWindowAux::new()
                    .width(20 + next(400))
                    .height(20 + next(300));
                conn.configure_window(window, &aux).expect("resize");
            }
            4 => {
                let mode = if next(2) == 0 {
                    x11rb::protocol::xproto::StackMode::ABOVE
                } else {
                    x11rb::protocol::xproto::StackMode::BELOW
                };
                let aux = x11rb::protocol::xproto::ConfigureWindowAux::new().stack_mode(mode);
                conn.configure_window(window, &aux).expect("restack");
            }
            5 => {
                conn.unmap_window(window).expect("unmap");
                if next(2) == 0 {
                    conn.sync().expect("sync");
                    conn.map_window(window).expect("map");
                }
            }
            _ => {
                conn.map_window(window).expect("map");
                conn.copy_area(window, window, gc, 0, 10, 0, 0, 200, 150)
                    .expect("copy");
            }
        }
        conn.sync().expect("sync");
        let fast = grab(&display, &mut capturer);
        let whole = grab(&display, &mut plain);
        assert!(
            fast.rgb == whole.rgb,
            "step {step} (kind {what}): the grab of drawn boxes differs from a whole grab"
        );
        assert_eq!(
            capturer.grab_raw(&display).expect("grab").fingerprint(),
            plain.grab_raw(&display).expect("grab").fingerprint(),
            "step {step}: both grabs hash alike"
        );
    }
}

/// A 4K screen in the default bounds is halved and scaled, and the scaled
/// frame is kept: after a box is drawn, the next frame redoes only that
/// part. It must show the box, and match a frame shaped afresh from the
/// same grab (PNG shade merging may move a few pixels by its bound).
#[test]
fn a_kept_scaled_frame_redone_where_drawn_matches_a_fresh_one() {
    let xvnc = Xvnc::start_sized(3840, 2160);
    let display = xvnc.connect();
    let painter = xvnc.connect();
    let conn = &painter.conn;
    let window = conn.generate_id().expect("id");
    let aux = CreateWindowAux::new()
        .background_pixel(0xf0_f0f0)
        .override_redirect(1);
    conn.create_window(
        0,
        window,
        display.root,
        100,
        100,
        3000,
        1800,
        0,
        WindowClass::INPUT_OUTPUT,
        0,
        &aux,
    )
    .expect("create window");
    conn.map_window(window).expect("map");
    let gc = conn.generate_id().expect("id");
    conn.create_gc(gc, window, &CreateGCAux::new()).expect("gc");
    // Text-like detail: thin dark strokes on the light window.
    for i in 0..300i16 {
        conn.change_gc(
            gc,
            &ChangeGCAux::new().foreground(0x10_1010 * (i as u32 % 8)),
        )
        .expect("gc");
        let strokes: Vec<Rectangle> = (0..40i16)
            .map(|j| Rectangle {
                x: j * 73 + i % 7,
                y: i * 6,
                width: 1 + (i as u16 + j as u16) % 5,
                height: 3,
            })
            .collect();
        conn.poly_fill_rectangle(window, gc, &strokes)
            .expect("strokes");
    }
    conn.sync().expect("sync");
    let bounds = FrameOptions {
        max_side: Some(1568),
        max_pixels: Some(1_150_000),
        ..Default::default()
    };
    let whole = Region {
        x: 0,
        y: 0,
        width: 3840,
        height: 2160,
    };
    let mut capturer = Capturer::new(&display);
    let mut rescaler = Rescaler::default();
    let first = capturer.grab_raw(&display).expect("grab");
    let first_generation = first.generation;
    shape_kept(&first, whole, &bounds, &mut rescaler).expect("first frame");

    // A red box at the screen's (1600, 1000), 300x200.
    conn.change_gc(gc, &ChangeGCAux::new().foreground(0xff_0000))
        .expect("gc");
    let red = Rectangle {
        x: 1500,
        y: 900,
        width: 300,
        height: 200,
    };
    conn.poly_fill_rectangle(window, gc, &[red]).expect("fill");
    conn.sync().expect("sync");
    let grab = capturer.grab_raw(&display).expect("grab");
    assert!(
        matches!(grab.drawn_since(first_generation), Drawn::Within(_)),
        "the grab knows the box was drawn: {:?}",
        grab.drawn_since(first_generation)
    );
    let kept = shape_kept(&grab, whole, &bounds, &mut rescaler).expect("kept frame");
    let fresh = shape(&grab, whole, &bounds).expect("fresh frame");
    let (info, kept_rgb) = decode_png(&kept.bytes);
    let (_, fresh_rgb) = decode_png(&fresh.bytes);
    assert_eq!((info.width, info.height), (1429, 804));
    // The box's middle, (1750, 1100) on the screen, is red in the frame.
    let scale = f64::from(info.width) / 3840.0;
    let (fx, fy) = ((1750.0 * scale) as usize, (1100.0 * scale) as usize);
    let at = (fy * info.width as usize + fx) * 3;
    assert!(
        kept_rgb[at] > 230 && kept_rgb[at + 1] < 25 && kept_rgb[at + 2] < 25,
        "the box shows: {:?}",
        &kept_rgb[at..at + 3]
    );
    let bound = SHADE_MOVE_MAX as u8 + 1;
    let moved = kept_rgb
        .chunks_exact(3)
        .zip(fresh_rgb.chunks_exact(3))
        .filter(|(a, b)| a.iter().zip(*b).any(|(x, y)| x.abs_diff(*y) > 1))
        .count();
    let worst = kept_rgb
        .iter()
        .zip(&fresh_rgb)
        .map(|(a, b)| a.abs_diff(*b))
        .max()
        .unwrap();
    assert!(
        worst <= bound && moved as f64 <= MOVED_SHARE_MAX * (kept_rgb.len() / 3) as f64,
        "the kept frame differs from a fresh one by up to {worst} levels in {moved} pixels"
    );
}

#[test]
fn capture_follows_a_resized_screen() {
    let xvnc = Xvnc::start();
    let display = xvnc.connect();
    let mut capturer = Capturer::new(&display);
    assert_eq!(grab(&display, &mut capturer).width, 1280);

    // RandR answers in the version the client announced.
    randr::query_version(&display.conn, 1, 5)
        .expect("send")
        .reply()
        .expect("RandR version");
    let info = randr::get_screen_info(&display.conn, display.root)
        .expect("send")
        .reply()
        .expect("screen info");
    let (size_id, size) = info
        .sizes
        .iter()
        .enumerate()
        .find(|(_, s)| (s.width, s.height) != (1280, 800))
        .expect("Xvnc offers other sizes");
    randr::set_screen_config(
        &display.conn,
        display.root,
        x11rb::CURRENT_TIME,
        info.config_timestamp,
        size_id as u16,
        randr::Rotation::ROTATE0,
        0,
    )
    .expect("send")
    .reply()
    .expect("resize");

    let frame = wait_until_blocking("a capture of the new size", LIMIT, || {
        let frame = grab(&display, &mut capturer);
        (frame.width == u32::from(size.width)).then_some(frame)
    });
    assert_eq!(
        (frame.width, frame.height),
        (u32::from(size.width), u32::from(size.height))
    );
    assert_eq!(
        frame.rgb.len(),
        frame.width as usize * frame.height as usize * 3
    );
    assert!(
        capturer.uses_shm(),
        "a new segment is attached for the new size"
    );
    let (info, _) = decode_png(&encode_png(&frame).expect("encode"));
    assert_eq!((info.width, info.height), (frame.width, frame.height));
}
