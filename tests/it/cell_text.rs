//! Cell text is data: what a judge or participant chose (a review, a file name in the
//! "stripped" list) reaches leaderboard.md, the HTML page and the terminal only as inert text.
//! The dummy judge's `hostile-review` writes a markdown image beacon, `<img onerror>`, an
//! unclosed fence, ESC sequences, a CR-forged `[mc]` line and a bidi override; a participant
//! plants a vendor file under a folder named to render, colour and reorder.

use crate::common::{TestCook, dummy_brief, show};

#[test]
fn reviews_and_file_names_a_cell_chose_render_as_inert_text_everywhere() {
    let planted = "x`](http://evil.example/b.png)\\e[31m\\u202eoh/CLAUDE.md";
    let brief = format!(
        "name: t\ntimeout_s: 60\njudge_timeout_s: 60\nparticipants:\n  - {{name: a, flavor: dummy, model: \"quality:4,plant:{planted}\"}}\n  - {{name: b, flavor: dummy, model: \"quality:2\"}}\njudges:\n  - {{name: j, flavor: dummy, model: \"hostile-review\"}}\nrubric:\n  scale: [0, 5]\n  dimensions:\n    - {{id: correctness, weight: 100}}\njudging: {{policy: allow_self}}\n"
    );
    let cook = TestCook::new("cell-text", &brief);
    let mut terminal = Vec::new();
    for command in ["cook", "judge", "report"] {
        let output = cook.run(command);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{command}: {}",
            show(&output)
        );
        terminal.extend(output.stdout);
        terminal.extend(output.stderr);
    }
    let review = cook.text("judging/j/review.md");
    assert!(
        review.contains("\u{202e}") && review.contains("\r[mc]"),
        "the attack ran: {review:?}"
    );
    let board = cook.text("leaderboard.md");
    for (bad, what) in [
        ("\u{1b}", "ESC"),
        ("\r", "CR"),
        ("\u{202e}", "bidi override"),
        ("\u{7}", "BEL"),
    ] {
        assert!(!board.contains(bad), "{what} in leaderboard.md:\n{board}");
    }
    // The review sits in a fence longer than the review's own four-backtick run, closed after
    // its last line: nothing in it renders and nothing after it is swallowed.
    let start = board
        .find("Review:\n\n`````text\ndummy judge: scored")
        .unwrap_or_else(|| panic!("{board}"));
    let block = &board[start..];
    let end = block
        .find("fdp.exe\n`````\n")
        .unwrap_or_else(|| panic!("closed: {block}"));
    let inside = &block[..end];
    for shown in [
        "![beacon](http://evil.example/beacon.png)",
        "<img src=x onerror=alert(1)>",
        "\n````\n",
        "^[[2J",
        "^M[mc] cook.finished all ok",
        "invoice<U+202E>",
    ] {
        assert!(
            inside.contains(shown),
            "`{shown}` shown inside the block: {inside}"
        );
    }
    // The planted folder's name, in the list of what was stripped, is a code span.
    let stripped = board
        .lines()
        .find(|l| l.starts_with("Stripped before judging"))
        .unwrap_or_else(|| panic!("{board}"));
    // (The folder `x`](http:` then `evil.example`: a path has no empty component.)
    assert!(
        stripped.contains("``out/x`](http:/evil.example/b.png)^[[31m<U+202E>oh/CLAUDE.md``"),
        "{stripped}"
    );
    let html = cook.text("leaderboard.html");
    for (bad, what) in [
        ("<img src=x", "raw img"),
        ("\u{1b}", "ESC"),
        ("\u{202e}", "bidi override"),
        ("\r", "CR"),
    ] {
        assert!(!html.contains(bad), "{what} in leaderboard.html");
    }
    assert!(
        html.contains("&lt;U+202E&gt;oh/CLAUDE.md"),
        "the stripped name, escaped"
    );
    for (bad, what) in [(0x1b_u8, "ESC"), (b'\r', "CR")] {
        assert!(
            !terminal.contains(&bad),
            "{what} on the terminal: {}",
            String::from_utf8_lossy(&terminal)
        );
    }
    assert!(!String::from_utf8_lossy(&terminal).contains('\u{202e}'));
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

/// Issue 21 (a gap: `diff` had a unit test only): file names a participant chose reach the
/// terminal through `diff` only as inert text. Round 2's output holds names with ESC sequences,
/// a CR-forged `[mc]` line, a newline-forged one and bidi overrides (written into the live
/// round's `out/` as a cell leaves them; the cell-side planting of such names is the test
/// above); `diff` lists each as added, and its output has no raw ESC, CR or bidi control and no
/// line a name started.
#[test]
fn diff_prints_hostile_file_names_as_safe_text() {
    let cook = TestCook::new("diff-names", &dummy_brief(&[("a", "quality:4")], ""));
    for command in ["cook", "refine"] {
        let output = cook.run(command);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{command}: {}",
            show(&output)
        );
    }
    let out = cook.dir().join("work/a/out");
    let hostile = [
        "\u{1b}[2J\u{1b}[31mred.txt",
        "ok.txt\r[mc] diff: nothing changed",
        "two\n[mc] forged line",
        "\u{202e}txt.exe",
        "\u{2066}iso\u{2069}late.md",
    ];
    for name in hostile {
        fs_err::write(out.join(name), "planted").unwrap();
    }
    let output = cook.run_args(&["diff", cook.name(), "--from", "1", "--to", "2"]);
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let text = String::from_utf8(output.stdout.clone()).expect("UTF-8");
    let raw: Vec<char> = text
        .chars()
        .filter(|c| {
            matches!(c, '\u{1b}' | '\r' | '\u{7f}')
                || ('\u{202a}'..='\u{202e}').contains(c)
                || ('\u{2066}'..='\u{2069}').contains(c)
                || matches!(c, '\u{200e}' | '\u{200f}' | '\u{061c}')
        })
        .collect();
    assert!(raw.is_empty(), "raw controls {raw:?} in: {text:?}");
    assert!(
        !text.lines().any(|l| l.starts_with("[mc]")),
        "no line a file name started: {text:?}"
    );
    let added = text
        .lines()
        .filter(|l| l.trim_start().starts_with("added"))
        .count();
    assert!(
        added >= hostile.len(),
        "each name listed as added: {text:?}"
    );
    for visible in ["red.txt", "ok.txt", "forged line", "txt.exe", "late.md"] {
        assert!(text.contains(visible), "`{visible}` shown: {text:?}");
    }
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}
