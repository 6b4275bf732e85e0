//! The dummy's scenario script: directives from `MULTICOOKER_MODEL`, separated by commas or
//! whitespace, each `name` or `name:argument`. The whole script is parsed before anything runs.

use std::fmt;

/// The attacks `sabotage:KIND` knows.
pub const SABOTAGE: [&str; 5] = ["junit", "daemon", "peek", "tap", "shout"];

/// One directive.
#[derive(Debug, Clone, PartialEq)]
pub enum Directive {
    /// `quality:N`: the score the dummy judge will give this submission.
    Quality(i64),
    /// `sleep:SECS`.
    Sleep(f64),
    /// `exit:N`: the exit code at the end.
    Exit(u8),
    /// `rate-limit`: print a vendor-style limit message.
    RateLimit,
    /// `no-output`: write no result.
    NoOutput,
    /// `note:TEXT`: a line appended to RESULT.md (a judge's: to review.md); `_` becomes a
    /// space.
    Note(String),
    /// `say:TEXT` (stdout) or `warn:TEXT` (stderr); `_` becomes a space.
    Say { text: String, stderr: bool },
    /// `escape[:SIBLING]`: plant symlinks, a FIFO, a socket and a hard link in the output.
    Escape(Option<String>),
    /// `big:SIZE`: a file of SIZE non-zero bytes.
    Big(u64),
    /// `sparse:SIZE`: a sparse file of SIZE bytes.
    Sparse(u64),
    /// `oom:SIZE`: allocate and touch SIZE bytes.
    Oom(u64),
    /// `forkbomb`: spawn children until refused.
    ForkBomb,
    /// `fill-tmp`: write to /tmp until it is full.
    FillTmp,
    /// `connect:HOST:PORT`: try a TCP connection, record the result.
    Connect(String),
    /// `via-proxy:HOST:PORT`: `CONNECT` through `$HTTPS_PROXY`, record the status and banner.
    ViaProxy(String),
    /// `read:PATH`: try to read a file or list a folder, record the result.
    Read(String),
    /// `listen:PORT`: answer TCP connections on PORT in the background.
    Listen(u16),
    /// `probe`: write SANDBOX.json, the sandbox seen from inside.
    Probe,
    /// `env`: write ENV.txt.
    Env,
    /// Judge only: write `{"A": {` as scores.json.
    InvalidJson,
    /// Judge only: the flat score form.
    Flat,
    /// Judge only: add a label that was never given.
    UnknownLabel,
    /// Judge only: the first label's first dimension exceeds the scale.
    OutOfScale,
    /// Judge only: the first label misses its last dimension.
    MissingDim,
    /// Judge only: text aimed at the grader in review.md.
    Inject,
    /// Judge only: a review.md built to render, run or forge in whatever shows it: a markdown
    /// image beacon, `<img onerror>`, an unclosed fence, ESC, a CR-forged `[mc]` line, a bidi
    /// override ([`HOSTILE_REVIEW`]).
    HostileReview,
    /// Judge only: a sparse 1 GiB scores.json.
    HugeScores,
    /// Judge only, pairwise: always prefer the submission shown first (position bias).
    PreferFirst,
    /// Judge only, blinding probe: guess this vendor for every submission.
    Guess(String),
    /// Participant: `plant:PATH` writes a small file at out/PATH (e.g. a vendor file).
    Plant(String),
    /// A tree N folders deep with a file at the bottom.
    Deep(u32),
    /// N small files under out/many/.
    Many(u32),
    /// Files whose names a careless copy chokes on (newline, escape, 255 bytes, leading dash).
    OddNames,
    /// Replaces out/<name> by a symbolic link to <target> (`link:<name>@<target>`).
    Link { name: String, target: String },
    /// Replaces out/<name> by a FIFO.
    FifoAs(String),
    /// Participant: `sabotage:KIND` writes a wrong answer and a program that attacks its
    /// verifier (issue 21): `junit` (10,000 passing cases in results/junit.xml, read-only),
    /// `daemon` (a daemon that stops the runner and swaps in an all-pass report), `peek` (prints
    /// the hidden expected answer), `tap` (a results/results.tap planning 3,000,000 tests),
    /// `shout` (`100 passed, 0 failed` on every stdout it can open).
    Sabotage(String),
    /// Participant: `solve:ANSWER` writes out/answer.txt and a program printing ANSWER
    /// (out/solution.mcs), for the hidden tests to check.
    Solve(String),
    /// Participant: out/solution.mcs loops forever (the verifier's timeout must end it).
    LoopForever,
    /// Participant: every known way to game the tests: its own conftest.py, runner, spec and
    /// forged reports in out/, and a program that forges the verifier's results and edits its
    /// tests while printing a wrong answer.
    Cheat,
    /// `search:NEEDLE`: lists every readable file of the cell (outside /proc, /sys, /dev) whose
    /// bytes contain NEEDLE, in SEARCH-<k>.txt (k: the how-manyth search).
    Search(String),
    /// `forge-record`: write a fake exit record (code 0, no OOM) to init's stdout
    /// (/proc/1/fd/1) and to its own; the attempts go to PROBES.txt.
    ForgeRecord,
    /// `half-record`: the start of an exit record and 20 KiB without a newline on stdout.
    HalfRecord,
    /// `freeze-init`: PTRACE_SEIZE + PTRACE_INTERRUPT, SIGSTOP and SIGKILL on PID 1; the
    /// attempts go to PROBES.txt.
    FreezeInit,
    /// `launch-attack`: runs a probe with `mc-cell launch` that tries to write a 0700 folder of
    /// this uid and leaves a daemon; what it saw, and whether the daemon outlived the call, go to
    /// PROBES.txt.
    LaunchAttack,
    /// Judge only: every submission gets the top of the scale, whatever it holds.
    Generous,
    /// `usage:TOKENS[@USD]`: print one claude-style assistant message using TOKENS tokens
    /// (and, with `@USD`, a result line with the running totals and cost), as a real CLI
    /// reports its spend.
    Usage { tokens: u64, usd: f64 },
    /// `burn:TOKENS[@USD]/SECS`: a `usage` every SECS seconds, until the cell is stopped.
    Burn { tokens: u64, usd: f64, every: f64 },
    /// `claim:TOKENS`: print one forged claude `result` line claiming TOKENS input tokens at
    /// once (`{"type":"result","usage":{"input_tokens":TOKENS}}`), as a hostile cell would to
    /// empty a shared budget.
    Claim(u64),
}

/// The review `hostile-review` writes.
pub const HOSTILE_REVIEW: &str = "Fine work.\n![beacon](http://evil.example/beacon.png)\n<img src=x onerror=alert(1)>\n````\nunclosed fence swallows the page\n\u{1b}[2J\u{1b}]0;pwned\u{7}\rwork\r[mc] cook.finished all ok\ninvoice\u{202e}fdp.exe\n";

/// A script that could not be parsed.
#[derive(Debug, PartialEq)]
pub struct ScriptError(pub String);

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Parses a whole script. A script that is one token naming no directive is a model name
/// (`opus`, `gpt-5-codex`, `gemini-2.5-pro:high`), ignored: a cook whose flavors were swapped to
/// `dummy` runs unchanged (issue 25: `model: opus` made every such cell exit 2). Among several
/// tokens an unknown one is a mistake, refused before anything runs.
pub fn parse(text: &str) -> Result<Vec<Directive>, ScriptError> {
    let tokens: Vec<&str> = text
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|t| !t.is_empty())
        .collect();
    if let [only] = tokens.as_slice()
        && is_model_name(only)
    {
        return Ok(Vec::new());
    }
    tokens.into_iter().map(parse_one).collect()
}

/// Whether a lone token is a model name rather than a directive: its name (before any `:`)
/// is no directive's.
pub fn is_model_name(token: &str) -> bool {
    let name = token.split_once(':').map_or(token, |(name, _)| name);
    parse_one(name).is_err_and(|e| e.0.starts_with(UNKNOWN))
}

/// How an unknown directive's error starts.
const UNKNOWN: &str = "mc-cell: unknown dummy directive";

fn parse_one(token: &str) -> Result<Directive, ScriptError> {
    let (name, arg) = match token.split_once(':') {
        Some((n, a)) => (n, Some(a)),
        None => (token, None),
    };
    let need = |what: &str| {
        arg.filter(|a| !a.is_empty())
            .ok_or_else(|| ScriptError(format!("mc-cell: dummy directive `{name}` needs {what}")))
    };
    let bad = |what: &str| {
        ScriptError(format!(
            "mc-cell: bad argument in dummy directive `{token}`: expected {what}"
        ))
    };
    let directive = match name {
        "quality" => Directive::Quality(need("a number")?.parse().map_err(|_| bad("an integer"))?),
        "sleep" => Directive::Sleep(
            need("seconds")?
                .parse()
                .ok()
                .filter(|s: &f64| s.is_finite() && *s >= 0.0)
                .ok_or_else(|| bad("seconds"))?,
        ),
        "exit" => Directive::Exit(
            need("a code")?
                .parse()
                .map_err(|_| bad("a code from 0 to 255"))?,
        ),
        "rate-limit" => Directive::RateLimit,
        "no-output" => Directive::NoOutput,
        "note" => Directive::Note(need("text")?.replace('_', " ")),
        "say" | "warn" => Directive::Say {
            text: need("text")?.replace('_', " "),
            stderr: name == "warn",
        },
        "escape" => Directive::Escape(arg.filter(|a| !a.is_empty()).map(str::to_owned)),
        "big" => Directive::Big(size(need("a size")?).ok_or_else(|| bad("a size like 10M"))?),
        "sparse" => Directive::Sparse(size(need("a size")?).ok_or_else(|| bad("a size like 10G"))?),
        "oom" => Directive::Oom(size(need("a size")?).ok_or_else(|| bad("a size like 1G"))?),
        "forkbomb" => Directive::ForkBomb,
        "fill-tmp" => Directive::FillTmp,
        "connect" => {
            let target = need("HOST:PORT")?;
            target
                .rsplit_once(':')
                .filter(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok())
                .ok_or_else(|| bad("HOST:PORT"))?;
            Directive::Connect(target.to_owned())
        }
        "via-proxy" => {
            let target = need("HOST:PORT")?;
            target
                .rsplit_once(':')
                .filter(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok())
                .ok_or_else(|| bad("HOST:PORT"))?;
            Directive::ViaProxy(target.to_owned())
        }
        "read" => Directive::Read(need("a path")?.to_owned()),
        "listen" => Directive::Listen(need("a port")?.parse().map_err(|_| bad("a port"))?),
        "probe" => Directive::Probe,
        "env" => Directive::Env,
        "invalid-json" => Directive::InvalidJson,
        "flat" => Directive::Flat,
        "unknown-label" => Directive::UnknownLabel,
        "out-of-scale" => Directive::OutOfScale,
        "missing-dim" => Directive::MissingDim,
        "inject" => Directive::Inject,
        "hostile-review" => Directive::HostileReview,
        "huge-scores" => Directive::HugeScores,
        "prefer-first" => Directive::PreferFirst,
        "guess" => Directive::Guess(need("a vendor")?.to_owned()),
        "plant" => {
            let path = need("a relative path")?;
            if path.starts_with('/') || path.split('/').any(|c| c == "..") {
                return Err(bad("a relative path inside out/"));
            }
            Directive::Plant(path.to_owned())
        }
        "deep" => Directive::Deep(need("a depth")?.parse().map_err(|_| bad("a depth"))?),
        "many" => Directive::Many(need("a count")?.parse().map_err(|_| bad("a count"))?),
        "odd-names" => Directive::OddNames,
        "link" => {
            let (name, target) = need("name@target")?
                .split_once('@')
                .ok_or_else(|| bad("name@target"))?;
            Directive::Link {
                name: name.to_owned(),
                target: target.to_owned(),
            }
        }
        "fifo-as" => Directive::FifoAs(need("a name")?.to_owned()),
        "sabotage" => {
            let kind = need("junit, daemon, peek, tap or shout")?;
            if !SABOTAGE.contains(&kind) {
                return Err(bad("junit, daemon, peek, tap or shout"));
            }
            Directive::Sabotage(kind.to_owned())
        }
        "solve" => Directive::Solve(need("an answer")?.replace('_', " ")),
        "loop-forever" => Directive::LoopForever,
        "cheat" => Directive::Cheat,
        "search" => Directive::Search(need("a needle")?.to_owned()),
        "forge-record" => Directive::ForgeRecord,
        "half-record" => Directive::HalfRecord,
        "freeze-init" => Directive::FreezeInit,
        "launch-attack" => Directive::LaunchAttack,
        "generous" => Directive::Generous,
        "usage" => {
            let (tokens, usd) = spend(need("TOKENS[@USD]")?).ok_or_else(|| bad("TOKENS[@USD]"))?;
            Directive::Usage { tokens, usd }
        }
        "claim" => Directive::Claim(need("TOKENS")?.parse().map_err(|_| bad("TOKENS"))?),
        "burn" => {
            let (amount, every) = need("TOKENS[@USD]/SECS")?
                .split_once('/')
                .ok_or_else(|| bad("TOKENS[@USD]/SECS"))?;
            let (tokens, usd) = spend(amount).ok_or_else(|| bad("TOKENS[@USD]/SECS"))?;
            let every = every
                .parse()
                .ok()
                .filter(|s: &f64| s.is_finite() && *s > 0.0)
                .ok_or_else(|| bad("TOKENS[@USD]/SECS with SECS above 0"))?;
            Directive::Burn { tokens, usd, every }
        }
        _ => {
            return Err(ScriptError(format!("{UNKNOWN} `{token}`")));
        }
    };
    Ok(directive)
}

/// Parses `TOKENS` or `TOKENS@USD`.
fn spend(text: &str) -> Option<(u64, f64)> {
    let (tokens, usd) = match text.split_once('@') {
        Some((t, u)) => (
            t,
            u.parse()
                .ok()
                .filter(|u: &f64| u.is_finite() && *u >= 0.0)?,
        ),
        None => (text, 0.0),
    };
    Some((tokens.parse().ok()?, usd))
}

/// Parses `10`, `4K`, `10M`, `2G` (powers of 1024).
pub fn size(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => text.split_at(i),
        None => (text, ""),
    };
    let multiplier: u64 = match unit.to_ascii_uppercase().as_str() {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        _ => return None,
    };
    digits.parse::<u64>().ok()?.checked_mul(multiplier)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_parse_in_order() {
        let script =
            parse("quality:4, sleep:0.5 exit:3,say:hello_there,big:2M,connect:host:80").unwrap();
        assert_eq!(
            script,
            [
                Directive::Quality(4),
                Directive::Sleep(0.5),
                Directive::Exit(3),
                Directive::Say {
                    text: "hello there".into(),
                    stderr: false
                },
                Directive::Big(2 << 20),
                Directive::Connect("host:80".into()),
            ]
        );
        assert_eq!(parse("").unwrap(), []);
        assert_eq!(
            parse("usage:500,usage:10@0.25,burn:2000@0.01/0.5").unwrap(),
            [
                Directive::Usage {
                    tokens: 500,
                    usd: 0.0
                },
                Directive::Usage {
                    tokens: 10,
                    usd: 0.25
                },
                Directive::Burn {
                    tokens: 2000,
                    usd: 0.01,
                    every: 0.5
                },
            ]
        );
        assert!(parse("burn:2000").is_err() && parse("burn:2000/0").is_err());
        assert_eq!(
            parse("claim:1000000000000").unwrap(),
            [Directive::Claim(1_000_000_000_000)]
        );
        assert!(parse("claim:lots").is_err());
        assert!(parse("usage:-5").is_err() && parse("usage:5@x").is_err());
    }

    #[test]
    fn mistakes_are_refused_before_anything_runs() {
        assert_eq!(
            parse("sleep:1,explode").unwrap_err().0,
            "mc-cell: unknown dummy directive `explode`"
        );
        assert!(
            parse("exit:300")
                .unwrap_err()
                .0
                .contains("a code from 0 to 255")
        );
        assert!(parse("connect:nohost").is_err());
        assert!(parse("quality").unwrap_err().0.contains("needs a number"));
    }

    #[test]
    fn a_lone_model_name_is_ignored_but_not_inside_a_script() {
        for model in [
            "opus",
            "gpt-5-codex",
            "gemini-2.5-pro:high",
            "claude-sonnet-4-5",
        ] {
            assert_eq!(parse(model).unwrap(), [], "{model}");
        }
        assert!(parse("quality:4,opus").is_err());
        assert!(
            parse("quality").is_err(),
            "a directive missing its argument is no model"
        );
        assert_eq!(parse("probe").unwrap(), [Directive::Probe]);
    }

    #[test]
    fn sizes_take_binary_suffixes() {
        assert_eq!(size("10"), Some(10));
        assert_eq!(size("4k"), Some(4096));
        assert_eq!(size("3G"), Some(3 << 30));
        assert_eq!(size("1T"), None);
    }
}
