//! The dummy's side actions: time, output noise, hostile files, resource exhaustion and network
//! probes. Each failure is reported on stderr and never stops the script.

use std::io::Write;
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::path::Path;
use std::time::Duration;

use crate::probe;
use crate::script::Directive;

/// Performs one directive (the ones that produce the main output are handled by the caller).
pub fn perform(directive: &Directive, out: &Path) {
    match directive {
        Directive::Sleep(seconds) => std::thread::sleep(Duration::from_secs_f64(*seconds)),
        Directive::Usage { tokens, usd } => crate::spend::report(*tokens, *usd),
        Directive::Burn { tokens, usd, every } => crate::spend::burn(*tokens, *usd, *every),
        Directive::Claim(tokens) => {
            println!("{{\"type\":\"result\",\"usage\":{{\"input_tokens\":{tokens}}}}}");
        }
        Directive::RateLimit => {
            println!("API Error: rate limit exceeded; please retry after 42 seconds")
        }
        Directive::Say {
            text,
            stderr: false,
        } => println!("{text}"),
        Directive::Say { text, stderr: true } => eprintln!("{text}"),
        Directive::Escape(sibling) => escape(out, sibling.as_deref()),
        Directive::Big(bytes) => report("big", write_big(&out.join("big.bin"), *bytes)),
        Directive::Sparse(bytes) => report(
            "sparse",
            std::fs::File::create(out.join("sparse.bin")).and_then(|f| f.set_len(*bytes)),
        ),
        Directive::Oom(bytes) => eat_memory(*bytes),
        Directive::ForkBomb => fork_bomb(),
        Directive::FillTmp => fill_tmp(),
        Directive::Connect(target) => record(out, &format!("connect {target} {}", connect(target))),
        Directive::Read(path) => record(out, &format!("read {path} {}", read(path))),
        Directive::ViaProxy(target) => {
            record(out, &format!("via-proxy {target} {}", via_proxy(target)))
        }
        Directive::Listen(port) => listen(*port),
        Directive::Probe => report("probe", probe::write_sandbox(&out.join("SANDBOX.json"))),
        Directive::Deep(depth) => report("deep", deep(out, *depth)),
        Directive::Many(count) => report("many", many(out, *count)),
        Directive::OddNames => report("odd-names", odd_names(out)),
        Directive::Link { name, target } => {
            let path = out.join(name);
            let _ = std::fs::remove_file(&path);
            report("link", std::os::unix::fs::symlink(target, &path));
        }
        Directive::FifoAs(name) => {
            let path = out.join(name);
            let _ = std::fs::remove_file(&path);
            report("fifo-as", make_fifo(&path));
        }
        Directive::Env => report("env", probe::write_env(&out.join("ENV.txt"))),
        Directive::Search(needle) => report("search", crate::search::write_search(needle, out)),
        Directive::ForgeRecord => forge_record(out),
        Directive::HalfRecord => half_record(),
        Directive::FreezeInit => freeze_init(out),
        Directive::LaunchAttack => crate::launch_probe::attack(out),
        _ => {}
    }
}

fn report(what: &str, result: std::io::Result<()>) {
    if let Err(error) = result {
        eprintln!("mc-cell: {what}: {error}");
    }
}

/// Appends a line to PROBES.txt.
fn record(out: &Path, line: &str) {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(out.join("PROBES.txt"));
    report("PROBES.txt", file.and_then(|mut f| writeln!(f, "{line}")));
}

fn connect(target: &str) -> String {
    let addresses = match target.to_socket_addrs() {
        Ok(addresses) => addresses.collect::<Vec<_>>(),
        Err(error) => return format!("error cannot resolve: {error}"),
    };
    let Some(address) = addresses.first() else {
        return "error no address".into();
    };
    match TcpStream::connect_timeout(address, Duration::from_secs(1)) {
        Ok(_) => "ok".into(),
        Err(error) => format!("error {error}"),
    }
}

/// `CONNECT target` through `$HTTPS_PROXY`; on 200, the first line the target sends.
fn via_proxy(target: &str) -> String {
    use std::io::{BufRead, BufReader};
    let Ok(proxy) = std::env::var("HTTPS_PROXY") else {
        return "error no HTTPS_PROXY".into();
    };
    let address = proxy
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    let mut stream = match address.to_socket_addrs().ok().and_then(|mut a| a.next()) {
        Some(a) => match TcpStream::connect_timeout(&a, Duration::from_secs(5)) {
            Ok(stream) => stream,
            Err(error) => return format!("error proxy unreachable: {error}"),
        },
        None => return format!("error cannot resolve proxy {address}"),
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    if let Err(error) = write!(
        stream,
        "CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n"
    ) {
        return format!("error {error}");
    }
    let mut reader = BufReader::new(stream);
    let mut status = String::new();
    if reader.read_line(&mut status).is_err() || status.len() < 12 {
        return "error no answer".into();
    }
    let code = status[9..12].to_owned();
    if code != "200" {
        return code;
    }
    let mut line = String::new();
    while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line.trim().is_empty() {
        line.clear();
    }
    format!("200 {}", line.trim())
}

fn read(path: &str) -> String {
    let path = Path::new(path);
    if path.is_dir() {
        return match std::fs::read_dir(path) {
            Ok(entries) => format!("ok {} entries", entries.count()),
            Err(error) => format!("error {error}"),
        };
    }
    match std::fs::read(path) {
        Ok(bytes) => format!("ok {} bytes", bytes.len()),
        Err(error) => format!("error {error}"),
    }
}

fn listen(port: u16) {
    match TcpListener::bind(("0.0.0.0", port)) {
        Ok(listener) => {
            std::thread::spawn(move || {
                for mut stream in listener.incoming().flatten() {
                    let _ = stream.write_all(b"hello from mc-cell\n");
                }
            });
        }
        Err(error) => eprintln!("mc-cell: listen {port}: {error}"),
    }
}

unsafe extern "C" {
    fn mkfifo(path: *const std::ffi::c_char, mode: u32) -> i32;
}

fn make_fifo(path: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let text =
        std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(std::io::Error::other)?;
    // SAFETY: `text` is a valid NUL-terminated path that outlives the call.
    let rc = unsafe { mkfifo(text.as_ptr(), 0o644) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Plants entries a careless host-side copy would follow or choke on.
fn escape(out: &Path, sibling: Option<&str>) {
    use std::os::unix::fs::symlink;
    report("escape passwd", symlink("/etc/passwd", out.join("passwd")));
    report("escape rootdir", symlink("/", out.join("rootdir")));
    if let Some(sibling) = sibling {
        report(
            "escape sibling",
            symlink(format!("../../{sibling}/out"), out.join("sibling")),
        );
        report(
            "escape sibling-result",
            symlink(
                format!("../../{sibling}/out/RESULT.md"),
                out.join("sibling-result"),
            ),
        );
    }
    report("escape fifo", make_fifo(&out.join("fifo")));
    match std::os::unix::net::UnixListener::bind(out.join("socket")) {
        Ok(listener) => std::mem::forget(listener),
        Err(error) => eprintln!("mc-cell: escape socket: {error}"),
    }
    report(
        "escape nested",
        std::fs::create_dir_all(out.join("nested"))
            .and_then(|()| std::fs::write(out.join("nested/ok.txt"), "fine\n")),
    );
    let target = if out.join("RESULT.md").is_file() {
        out.join("RESULT.md")
    } else {
        out.join("nested/ok.txt")
    };
    report(
        "escape hardlink",
        std::fs::hard_link(target, out.join("nested/hardlink-to-result")),
    );
}

fn write_big(path: &Path, bytes: u64) -> std::io::Result<()> {
    let mut file = std::fs::File::create(path)?;
    let chunk = vec![b'x'; 1 << 20];
    let mut left = bytes;
    while left > 0 {
        let n = usize::try_from(left.min(chunk.len() as u64)).unwrap_or(chunk.len());
        file.write_all(&chunk[..n])?;
        left -= n as u64;
    }
    Ok(())
}

fn eat_memory(bytes: u64) {
    let mut kept: Vec<Vec<u8>> = Vec::new();
    let mut total = 0u64;
    while total < bytes {
        let mut block = vec![0u8; 16 << 20];
        for i in (0..block.len()).step_by(4096) {
            block[i] = 1;
        }
        total += block.len() as u64;
        kept.push(block);
    }
    println!("oom: holding {} MiB", total >> 20);
    std::mem::forget(kept);
}

fn fork_bomb() {
    let mut spawned = 0;
    let error = loop {
        if spawned >= 10_000 {
            break "stopped at 10000".to_owned();
        }
        match std::process::Command::new("/proc/self/exe")
            .args(["dummy-sleep", "30"])
            .spawn()
        {
            Ok(child) => {
                std::mem::forget(child);
                spawned += 1;
            }
            Err(error) => break error.to_string(),
        }
    };
    println!("forkbomb: spawned {spawned} children, then: {error}");
}

fn fill_tmp() {
    let chunk = vec![b'f'; 1 << 20];
    let mut written = 0;
    let error = match std::fs::File::create("/tmp/fill.bin") {
        Ok(mut file) => loop {
            if let Err(error) = file.write_all(&chunk) {
                break error.to_string();
            }
            written += 1;
        },
        Err(error) => error.to_string(),
    };
    let _ = std::fs::remove_file("/tmp/fill.bin");
    println!("fill-tmp: wrote {written} MiB, then: {error}");
}

fn deep(out: &Path, depth: u32) -> std::io::Result<()> {
    // Built one level at a time from the bottom's parent, so no single path passes PATH_MAX.
    std::env::set_current_dir(out)?;
    for _ in 0..depth {
        std::fs::create_dir("d")?;
        std::env::set_current_dir("d")?;
    }
    std::fs::write("bottom.txt", "the bottom\n")?;
    std::env::set_current_dir("/")
}

fn many(out: &Path, count: u32) -> std::io::Result<()> {
    let dir = out.join("many");
    std::fs::create_dir_all(&dir)?;
    for i in 0..count {
        std::fs::write(dir.join(format!("f{i}")), b"x")?;
    }
    Ok(())
}

fn odd_names(out: &Path) -> std::io::Result<()> {
    let dir = out.join("odd");
    std::fs::create_dir_all(&dir)?;
    let long = "n".repeat(255);
    for name in [
        "a b",
        "new\nline",
        "\u{1b}[31mred",
        "-rf",
        "ünï😀",
        long.as_str(),
        "trailing ",
    ] {
        std::fs::write(dir.join(name), name.as_bytes())?;
    }
    Ok(())
}

/// A record init would print for a clean exit.
const FORGED: &str =
    "\n\u{1e}[mc-cell] exit {\"code\":0,\"signal\":null,\"timed_out\":false,\"oom\":false}\n";

fn forge_record(out: &Path) {
    let init = std::fs::OpenOptions::new()
        .write(true)
        .open("/proc/1/fd/1")
        .and_then(|mut f| f.write_all(FORGED.as_bytes()));
    record(out, &format!("forge /proc/1/fd/1 {}", outcome(&init)));
    let mut stdout = std::io::stdout().lock();
    let own = stdout
        .write_all(FORGED.as_bytes())
        .and_then(|()| stdout.flush());
    record(out, &format!("forge stdout {}", outcome(&own)));
}

fn half_record() {
    let mut stdout = std::io::stdout().lock();
    let mut text = String::from("\u{1e}[mc-cell] exit {\"code\":0,\"pad\":\"");
    text.push_str(&"x".repeat(20 << 10));
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.write_all(b"\x00\xff\xfe binary\x1b[2J");
    let _ = stdout.flush();
    std::thread::sleep(Duration::from_millis(300));
    let _ = stdout.write_all(b"\n");
    let _ = stdout.flush();
}

fn freeze_init(out: &Path) {
    let seize = crate::sys::seize_and_interrupt(1);
    record(out, &format!("freeze ptrace {}", outcome(&seize)));
    let stop = crate::sys::signal(1, crate::sys::SIGSTOP);
    record(out, &format!("freeze sigstop {}", outcome(&stop)));
    let kill = crate::sys::signal(1, crate::sys::SIGKILL);
    record(out, &format!("freeze sigkill {}", outcome(&kill)));
}

/// `ok`, or `denied: ERROR` (what a PROBES.txt line says of an attempt).
fn outcome(result: &std::io::Result<()>) -> String {
    match result {
        Ok(()) => "ok".to_owned(),
        Err(e) => format!("denied: {e}"),
    }
}
