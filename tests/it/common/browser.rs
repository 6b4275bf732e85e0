//! The headless browser the HTML tests drive: Debian's chromium. Found on PATH, else installed
//! once (as root, with apt-get) the way `.ci/run` used to, else the test fails with the exact
//! command that fixes it (issue 17: the README's test command must do its own set-up on a
//! fresh machine with Docker and Rust, and never panic without saying why).

use std::process::Command;
use std::sync::OnceLock;

/// The names chromium goes by.
const NAMES: [&str; 4] = ["chromium", "chromium-browser", "google-chrome", "chrome"];

/// What installs it on Debian and Ubuntu (about 150 MB download, 500 MB on disk).
pub(crate) const INSTALL: &str =
    "apt-get update && apt-get install -y --no-install-recommends chromium";

fn found() -> Option<&'static str> {
    NAMES.into_iter().find(|name| {
        Command::new(name)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// True for root: `/proc/self` belongs to the process's effective user.
fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// Installs Debian's chromium when this process may (root, apt-get present). Returns what went
/// wrong otherwise.
#[expect(
    clippy::print_stderr,
    reason = "a minute-long install in a test run says what it is doing"
)]
fn install() -> Result<(), String> {
    if !is_root() {
        return Err(format!(
            "not root, so it was not installed; run `sudo sh -c '{INSTALL}'`"
        ));
    }
    if Command::new("apt-get").arg("--version").output().is_err() {
        return Err(
            "no apt-get here; install chromium (or google-chrome) with this system's package manager"
                .into(),
        );
    }
    eprintln!("the HTML tests need chromium; installing it: {INSTALL}");
    for args in [
        &["update", "-qq"][..],
        &[
            "install",
            "-y",
            "-qq",
            "--no-install-recommends",
            "chromium",
        ][..],
    ] {
        let output = Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .output()
            .map_err(|e| format!("apt-get could not run: {e}"))?;
        if !output.status.success() {
            return Err(format!(
                "`apt-get {}` failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&output.stderr).trim()
            ));
        }
    }
    Ok(())
}

/// The browser's command name, installing it first if it is missing and this process may.
pub(crate) fn chromium() -> &'static str {
    static BROWSER: OnceLock<Result<&'static str, String>> = OnceLock::new();
    let found = BROWSER.get_or_init(|| {
        if let Some(name) = found() {
            return Ok(name);
        }
        install()?;
        found().ok_or_else(|| "apt-get installed chromium, but it does not start".to_owned())
    });
    match found {
        Ok(name) => name,
        Err(problem) => panic!(
            "the HTML tests need a headless chromium ({} on PATH): {problem}. Fix: `{INSTALL}` (as root)",
            NAMES.join(", ")
        ),
    }
}

/// What a page looks like at one screen size, measured inside the browser.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct Layout {
    /// The viewport's width (the iframe's, so it is exactly the size asked for).
    pub(crate) inner_width: u64,
    /// The page's width: more than `inner_width` means it scrolls sideways.
    pub(crate) scroll_width: u64,
    /// The page's height.
    pub(crate) scroll_height: u64,
    /// The verdict (or the empty state), if the page has one.
    pub(crate) headline: Option<String>,
    /// Numeric cells that do not sit under a numeric header of their column.
    pub(crate) misaligned: Vec<String>,
    /// Elements outside any scroll container that reach past the viewport's right edge.
    pub(crate) too_wide: Vec<String>,
}

/// Measures the page from inside: run in a copy of the page (its CSP, which forbids every
/// script, taken out of the copy only), reported to the harness page around it.
const PROBE: &str = r#"<script>(function(){
var iw=innerWidth,bad=[],wide=[];
document.querySelectorAll('table').forEach(function(t){
  var head=t.tHead&&t.tHead.rows[0];
  t.querySelectorAll(':scope > tbody > tr, :scope > tr').forEach(function(tr,r){
    for(var i=0;i<tr.cells.length;i++){var c=tr.cells[i];if(!c.classList.contains('num'))continue;
      var where=(t.id||t.className||'table')+' row '+r+' column '+i+' "'+c.textContent.trim()+'"';
      var h=head&&head.cells[i];if(!h){bad.push(where+': no header');continue;}
      var a=c.getBoundingClientRect(),b=h.getBoundingClientRect(),mid=(a.left+a.right)/2;
      if(!h.classList.contains('num')||mid<b.left-0.5||mid>b.right+0.5)bad.push(where+' under "'+h.textContent.trim()+'"');}
  });
});
document.body.querySelectorAll('*').forEach(function(e){if(e.closest('.scroll'))return;var r=e.getBoundingClientRect();
  if(r.right>iw+0.5)wide.push(e.tagName+(e.id?'#'+e.id:'')+(e.className&&e.className.baseVal===undefined?'.'+e.className:'')+' right '+Math.round(r.right));});
var v=document.getElementById('verdict')||document.getElementById('empty')||document.getElementById('no-scores');
parent.postMessage(JSON.stringify({inner_width:iw,scroll_width:document.documentElement.scrollWidth,scroll_height:document.documentElement.scrollHeight,headline:v?v.textContent:null,misaligned:bad,too_wide:wide.slice(0,20)}),'*');
})();</script>"#;

/// Where the screenshots go (kept as CI artifacts): `target/tmp/screenshots/`.
pub(crate) fn screenshot_dir() -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("screenshots");
    fs_err::create_dir_all(&dir).unwrap();
    dir
}

/// Runs chromium on a harness page holding the page in an iframe of exactly `width`×`height`
/// (a headless window is at least 500 px wide, an iframe any width), with `extra` flags.
fn run_framed(
    page: &std::path::Path,
    (width, height): (u32, u32),
    extra: &str,
) -> std::process::Output {
    let dir = page.parent().unwrap();
    let harness = dir.join(format!("harness-{width}x{height}.html"));
    fs_err::write(
        &harness,
        format!(
            "<!DOCTYPE html><html><body style=\"margin:0;background:#9aa3ad\"><iframe src=\"{}\" style=\"border:0;display:block;width:{width}px;height:{height}px;background:#fff\"></iframe><pre id=\"layout\" style=\"display:none\"></pre><script>addEventListener('message',function(e){{document.getElementById('layout').textContent=e.data}})</script></body></html>",
            page.file_name().unwrap().to_string_lossy()
        ),
    )
    .unwrap();
    let profile = tempfile::tempdir().unwrap();
    Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--window-size={},{}", width.max(500), height + 120))
        .arg(extra)
        .arg(format!("file://{}", harness.display()))
        .output()
        .unwrap()
}

/// Loads `page` at `width`×`height`, measures it and saves its screenshot as
/// `<name>-<width>x<height>.png`, and one of the whole page as `…-full.png`, in
/// [`screenshot_dir`].
pub(crate) fn layout(page: &std::path::Path, name: &str, size: (u32, u32)) -> Layout {
    let html = fs_err::read_to_string(page).unwrap();
    let csp = "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">";
    assert!(html.contains(csp), "the page forbids scripts and loads");
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("page.html");
    let probed = html
        .replace(csp, "")
        .replace("</body>", &format!("{PROBE}</body>"));
    fs_err::write(&copy, probed).unwrap();
    let dumped = run_framed(&copy, size, "--dump-dom");
    assert!(dumped.status.success(), "{}", crate::common::show(&dumped));
    let dom = String::from_utf8_lossy(&dumped.stdout);
    let json = dom
        .split("<pre id=\"layout\" style=\"display:none\">")
        .nth(1)
        .and_then(|rest| rest.split("</pre>").next())
        .unwrap_or_default()
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let layout: Layout = serde_json::from_str(&json)
        .unwrap_or_else(|e| panic!("the probe did not report ({e}): {dom}"));
    let shots = screenshot_dir();
    let (width, height) = size;
    let shot = shots.join(format!("{name}-{width}x{height}.png"));
    let output = run_framed(&copy, size, &format!("--screenshot={}", shot.display()));
    assert!(output.status.success(), "{}", crate::common::show(&output));
    let tall = u32::try_from(layout.scroll_height.clamp(u64::from(height), 6000)).unwrap();
    let full = shots.join(format!("{name}-{width}x{height}-full.png"));
    let output = run_framed(
        &copy,
        (width, tall),
        &format!("--screenshot={}", full.display()),
    );
    assert!(output.status.success(), "{}", crate::common::show(&output));
    layout
}

/// Asserts what every page must do at every size: fit, open with a headline naming `leader`,
/// numbers under their headers.
pub(crate) fn assert_fits(layout: &Layout, size: (u32, u32), leader: &str) {
    assert_eq!(
        layout.inner_width,
        u64::from(size.0),
        "measured at the size asked for"
    );
    assert!(
        layout.scroll_width <= layout.inner_width,
        "the page scrolls sideways at {size:?}: {} > {}; too wide: {:?}",
        layout.scroll_width,
        layout.inner_width,
        layout.too_wide
    );
    assert!(
        layout.too_wide.is_empty(),
        "{size:?}: {:?}",
        layout.too_wide
    );
    let headline = layout.headline.as_deref().unwrap_or_default();
    assert!(
        headline.contains(leader),
        "the headline names the leader `{leader}` at {size:?}: {headline:?}"
    );
    assert!(
        layout.misaligned.is_empty(),
        "{size:?}: {:?}",
        layout.misaligned
    );
}
