//! The tool list: names, descriptions, input schemas and truthful annotations.
//! Built once; `tools/list` answers from it without touching Docker.

use super::args::{
    ActArgs, LaunchAppArgs, ListFilesArgs, ObserveArgs, OpenPathArgs, ReadFileArgs, SessionArgs,
    SetCwdArgs, ShellArgs, StartComputerArgs, TransferArgs, WriteFileArgs,
};
use rmcp::handler::server::common::schema_for_type;
use rmcp::model::{Tool, ToolAnnotations};

/// Hints in the order of MCP's annotation fields.
struct Hints {
    read_only: bool,
    destructive: bool,
    idempotent: bool,
    /// Everything here acts on the computer, which is outside this process;
    /// only the file tools stay within a closed world of files.
    open_world: bool,
}

fn tool<T: schemars::JsonSchema + 'static>(
    name: &'static str,
    title: &str,
    description: &'static str,
    hints: Hints,
) -> Tool {
    Tool::new(name, description, schema_for_type::<T>()).with_annotations(
        ToolAnnotations::from_raw(
            Some(title.to_string()),
            Some(hints.read_only),
            Some(hints.destructive),
            Some(hints.idempotent),
            Some(hints.open_world),
        ),
    )
}

pub fn tools() -> Vec<Tool> {
    vec![
        tool::<StartComputerArgs>(
            "start_computer",
            "Start a computer session",
            "Start a session on the shared Linux desktop (Debian 13 in Docker), creating or starting the computer when needed. Returns the session_id every other tool takes, and a viewer_url a person can open to watch. Each session gets its own screen on its first computer_observe.",
            Hints { read_only: false, destructive: false, idempotent: false, open_world: true },
        ),
        tool::<SessionArgs>(
            "end_session",
            "End a session",
            "End a session: closes its screen (and the screen's Chromium, which saves its logins and bookmarks first) and frees the screen number. Files are never touched.",
            Hints { read_only: false, destructive: true, idempotent: true, open_world: true },
        ),
        tool::<ObserveArgs>(
            "computer_observe",
            "Screenshot the session's screen",
            "Take a screenshot of this session's own screen with frame_id, captured_at, screen size, cursor position and active window title. The frame keeps to max_side (default 1568 px) and about 1.15 megapixels, so a large screen comes scaled down: the result gives frame_width, frame_height and scale, and computer_act takes that frame_id to click in the frame's own pixels. region {x,y,width,height} (screen pixels) returns only that part, at up to full resolution (zoom). format png (default) or jpeg with quality. Frames stay under 1 MB. The first call opens the screen. When nothing changed since this session's previous screenshot of the same region and size, the image is left out and unchanged is true. view text (or both) returns the screen as text: its windows (title, class, pid, geometry, focus; topmost first) and the accessibility tree of the focused window or of window (class or title), one line per node such as `e7 button \"Save\" [focused] @ 412,300 80x28`; pages in the browser come from the page itself, other apps (GTK, Qt, LibreOffice) from the screen's accessibility bus, and apps that expose nothing (xterm) are listed with a note. A tree over max_nodes (default 400) is cut with a cursor for the next page; an unchanged view leaves its nodes out and its refs stay valid.",
            Hints { read_only: true, destructive: false, idempotent: false, open_world: true },
        ),
        tool::<ActArgs>(
            "computer_act",
            "Act on the session's screen",
            "Run 1 to 24 mouse and keyboard actions in order on this session's screen, then (observe=true, default) return a screenshot taken settle_ms (default 300, max 5000) after the last action, or with settle: quiet as soon as the screen has been still for quiet_ms (default 250; settle_ms then the longest wait, default 3000). x/y are screen pixels, or the pixels of a recent frame when frame_id is given; click, move, down, up and scroll take ref instead (a node of this session's latest text view: the action lands on the centre of its visible part). max_side, format and quality shape the screenshot as in computer_observe. Actions: click {x,y or ref, button}, move {x,y or ref}, down/up {button, optional x,y}, type {text: any Unicode up to 10000 characters, \\n presses Enter}, key {key: chord such as enter, esc, f5, ctrl+shift+t, cmd+a; modifiers ctrl, alt (option), shift, super (cmd, meta, win)}, scroll {direction up|down|left|right, steps 1..20 default 3, optional x,y}, wait {ms 0..5000}, focus {target: window class or title; starts the app when none matches}. The first failing action stops the batch. The 4th identical batch of pointer, scroll or key actions in a row that leaves the screen unchanged is refused.",
            Hints { read_only: false, destructive: true, idempotent: false, open_world: true },
        ),
        tool::<OpenPathArgs>(
            "open_path",
            "Open a page or file on the screen",
            "Open an http(s) URL or a file on this session's screen and return a screenshot once it loaded (or after 15 s, saying it was still loading). Pages and HTML, PDF, image, text, JSON and XML files open in the screen's own Chromium (started when needed, signed in wherever the other screens are); other files open in their default app. settle, settle_ms and quiet_ms as in computer_act, counted from when it opened: by default no extra wait; with settle: quiet the screenshot waits until the screen has been still for quiet_ms (for pages that animate after loading). max_side, format and quality shape the screenshot as in computer_observe. A missing file is an error that lists what the folder holds.",
            Hints { read_only: false, destructive: false, idempotent: false, open_world: true },
        ),
        tool::<LaunchAppArgs>(
            "launch_app",
            "Start or raise an app on the screen",
            "Start an app on this session's screen, or raise its window when one is open, and return a screenshot once its window shows. app: `browser` (the screen's Chromium), `terminal`, an installed application (.desktop id or name), or a program on PATH. uri: optional, opened in the app (the browser opens it in a new tab). settle, settle_ms and quiet_ms as in open_path. max_side, format and quality shape the screenshot as in computer_observe. An unknown app is an error that lists the installed ones.",
            Hints { read_only: false, destructive: false, idempotent: false, open_world: true },
        ),
        tool::<SessionArgs>(
            "start_chrome_devtools",
            "Start Chrome DevTools for the screen's browser",
            "Start Chrome DevTools' MCP tools (DOM snapshot, console, network log, script evaluation, screenshots, performance traces) for this session's browser, starting the browser when none runs. You then call them through the shell tool: `mcpc @cdt-N tools-call <tool> '<json>'` (N is the screen number; the reply says it and lists the tools). Calling it again returns the same bridge. It stops by itself after COMPUTER_USE_DEVTOOLS_IDLE (default 10m) without calls; the next mcpc call starts it again with the pages kept. Needs COMPUTER_USE_SHELL_TIMEOUT_MAX of 60 or more.",
            Hints { read_only: false, destructive: false, idempotent: true, open_world: true },
        ),
        tool::<SessionArgs>(
            "stop_chrome_devtools",
            "Stop Chrome DevTools for the screen's browser",
            "Stop this session's DevTools bridge at once and free its memory (about 300 MB). The browser and its pages stay.",
            Hints { read_only: false, destructive: false, idempotent: true, open_world: true },
        ),
        tool::<ShellArgs>(
            "shell",
            "Run a shell command",
            "Run a command with `bash -lc` as the user `computer` in the session's working folder, with no input; DISPLAY points at the session's screen once it has one. Returns exit_code, duration_ms, timed_out, stdout and stderr (each keeps its first and last 15000 bytes). A non-zero exit is a normal result. The call returns when the command exits: start long jobs in the background with output redirected, e.g. `setsid nohup server >log 2>&1 &`. On timeout the command and everything it started are killed.",
            Hints { read_only: false, destructive: true, idempotent: false, open_world: true },
        ),
        tool::<SetCwdArgs>(
            "set_cwd",
            "Change the working folder",
            "Change the session's working folder (used by shell and the file tools). Relative paths start at the current one; `~` is home. Returns the new absolute path.",
            Hints { read_only: false, destructive: false, idempotent: true, open_world: false },
        ),
        tool::<ListFilesArgs>(
            "list_files",
            "List a folder",
            "List one folder (default: the working folder), folders first, each entry with name, type (file, dir, symlink, other), size and modified time. At most 1000 entries, with a note of how many more exist.",
            Hints { read_only: true, destructive: false, idempotent: true, open_world: false },
        ),
        tool::<ReadFileArgs>(
            "read_file",
            "Read a file",
            "Read a UTF-8 text file (optionally a range: offset = first line from 1, limit = line count), or a PNG/JPEG image up to 1 MB as an image. Long text keeps its first and last 15000 bytes with a note on reading a range. Other binary files are refused: use shell or file_transfer.",
            Hints { read_only: true, destructive: false, idempotent: true, open_world: false },
        ),
        tool::<WriteFileArgs>(
            "write_file",
            "Write a file",
            "Replace or create a file with UTF-8 content up to 10 MB. Creates missing folders, writes atomically, keeps an existing file's permissions, refuses a folder. Returns the absolute path and byte count.",
            Hints { read_only: false, destructive: true, idempotent: true, open_world: false },
        ),
        tool::<TransferArgs>(
            "file_transfer",
            "Copy files between this machine and the computer",
            "Copy one file, or a folder with everything below it, from this machine to the computer (direction to_computer: host_path -> computer_path) or back (from_computer: computer_path -> host_path). Sizes are unlimited and content may be binary; empty folders, permission bits (such as executables) and symlinks survive the copy, and a symlink given as the path itself is followed. Destination as with `cp -r`: if it is an existing folder, the copy is placed inside it under its own name (copying ~/notes.txt to an existing ~/Desktop gives ~/Desktop/notes.txt); if not, the path names the copy and missing parent folders are created. overwrite=false (default) refuses, before writing anything, when the final path exists; overwrite=true replaces files and merges into folders, keeping what else is there, but files and folders never replace each other, and such a conflict found partway stops the copy, keeping what was already copied. No overall time limit; fails after 60 s with no progress. Returns path, files, folders, symlinks, bytes, duration_ms and skipped entries with reasons (pipes, sockets, devices, unreadable or unsafe entries, names invalid on Windows). Sends progress notifications (bytes and files so far) when the request has a progress token.",
            Hints { read_only: false, destructive: true, idempotent: false, open_world: true },
        ),
    ]
}
