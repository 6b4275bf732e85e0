use super::*;

use crate::flavor::fixtures::success as fixture;

/// Fed in chunks of any size, the meter ends where the after-the-fact parser does.
#[test]
fn the_live_total_is_the_usage_dicts_total_whatever_the_chunking() {
    for flavor in ["claude", "codex", "agy", "grok"] {
        let text = fixture(flavor);
        let expected = crate::flavor::usage_from_output(flavor, text, Some("m")).unwrap();
        for size in [1, 7, 64, 4096] {
            let mut meter = Meter::new(flavor);
            for chunk in text.as_bytes().chunks(size) {
                meter.push(chunk);
            }
            meter.finish();
            assert_eq!(
                Some(meter.spend().tokens),
                expected["total_tokens"].as_u64(),
                "{flavor}, chunks of {size}"
            );
            let usd = expected
                .get("cost_usd")
                .and_then(Value::as_f64)
                .unwrap_or(0.0);
            assert!((meter.spend().usd - usd).abs() < 1e-9, "{flavor}: {usd}");
        }
    }
}

/// claude's spend grows with each message, before any result line: that is what lets a budget
/// stop a cell while it runs.
#[test]
fn claude_spend_grows_message_by_message() {
    let mut meter = Meter::new("claude");
    let line = |id: &str, output: u64| {
        format!(
            "{{\"type\":\"assistant\",\"message\":{{\"id\":\"{id}\",\"model\":\"m\",\"usage\":{{\"input_tokens\":100,\"output_tokens\":{output}}}}}}}\n"
        )
    };
    assert!(meter.push(line("a", 5).as_bytes()));
    assert_eq!(meter.spend().tokens, 105);
    assert!(
        meter.push(line("a", 9).as_bytes()),
        "a message's later line"
    );
    assert_eq!(
        meter.spend().tokens,
        109,
        "counted once, with its final output"
    );
    assert!(!meter.push(line("a", 9).as_bytes()));
    meter.push(line("b", 1).as_bytes());
    assert_eq!(meter.spend().tokens, 210);
    let synthetic = r#"{"type":"assistant","message":{"id":"x","model":"<synthetic>","usage":{"input_tokens":999}}}"#;
    assert!(
        !meter.push(format!("{synthetic}\n").as_bytes()),
        "a notice is not spend"
    );
    let result =
        r#"{"type":"result","total_cost_usd":0.5,"usage":{"input_tokens":300,"output_tokens":20}}"#;
    assert!(meter.push(format!("{result}\n").as_bytes()));
    assert_eq!(
        meter.spend(),
        Spend {
            tokens: 320,
            usd: 0.5
        }
    );
}

#[test]
fn codex_adds_each_turn_as_it_completes() {
    let mut meter = Meter::new("codex");
    let turn = r#"{"type":"turn.completed","usage":{"input_tokens":900,"cached_input_tokens":100,"output_tokens":200}}"#;
    meter.push(format!("{turn}\n").as_bytes());
    assert_eq!(meter.spend().tokens, 1100, "cached input is part of input");
    meter.push(format!("{turn}\n").as_bytes());
    assert_eq!(
        meter.spend(),
        Spend {
            tokens: 2200,
            usd: 0.0
        }
    );
}

#[test]
fn custom_flavors_and_noise_spend_nothing() {
    let mut custom = Meter::new("mycli");
    assert!(!custom.push(fixture("claude").as_bytes()));
    assert_eq!(custom.spend(), Spend::default());
    let mut meter = Meter::new("claude");
    assert!(!meter.push(b"not json\n{\"type\":\"assistant\"\n[1,2]\n"));
    assert_eq!(
        reports("codex"),
        Reports {
            tokens: true,
            usd: false
        }
    );
    assert_eq!(
        reports("mycli"),
        Reports {
            tokens: false,
            usd: false
        }
    );
}

/// A line longer than the cap (a huge tool result) is skipped whole; the next one counts.
#[test]
fn an_overlong_line_is_skipped_and_the_next_one_read() {
    let mut meter = Meter::new("claude");
    let huge = format!(
        "{{\"type\":\"assistant\",\"message\":{{\"usage\":{{\"input_tokens\":7}},\"pad\":\"{}\"}}}}\n",
        "x".repeat(MAX_LINE_BYTES)
    );
    for chunk in huge.as_bytes().chunks(1 << 20) {
        meter.push(chunk);
    }
    assert_eq!(meter.spend().tokens, 0);
    meter.push(br#"{"type":"assistant","message":{"usage":{"input_tokens":5}}}"#);
    meter.push(b"\n");
    assert_eq!(meter.spend().tokens, 5);
}

/// A line claiming more than one turn of its flavor can cost is not counted and stops the
/// meter: the issue's forged `result` line, an assistant message, a codex turn, a grok cost.
#[test]
fn a_line_claiming_more_than_a_turn_can_cost_is_not_counted() {
    let forged = "{\"type\":\"result\",\"usage\":{\"input_tokens\":1000000000000}}\n";
    let mut meter = Meter::new("dummy");
    meter.push(
        b"{\"type\":\"assistant\",\"message\":{\"id\":\"a\",\"usage\":{\"input_tokens\":700}}}\n",
    );
    assert!(meter.implausible().is_none());
    assert!(!meter.push(forged.as_bytes()), "not counted");
    assert_eq!(meter.spend().tokens, 700, "what came before stays");
    let claim = meter.implausible().expect("flagged");
    assert_eq!(claim.claimed.tokens, 1_000_000_000_000 - 700);
    assert_eq!(
        claim.allowed.tokens, 1_128_000,
        "one turn, the cell just started"
    );
    // Nothing after the forgery is believed either: the cell is stopped for it.
    meter.push(
        b"{\"type\":\"assistant\",\"message\":{\"id\":\"b\",\"usage\":{\"input_tokens\":5}}}\n",
    );
    assert_eq!(meter.spend().tokens, 700);

    // One message is one turn: a message of a full context plus output is believed, one more
    // token than that is not; a later line of a known message is taken back to its old count.
    let message = |id: &str, input: u64, output: u64| {
        format!(
            "{{\"type\":\"assistant\",\"message\":{{\"id\":\"{id}\",\"usage\":{{\"input_tokens\":{input},\"output_tokens\":{output}}}}}}}\n"
        )
    };
    let mut meter = Meter::new("claude");
    meter.push(message("m", 1_000_000, 128_000).as_bytes());
    assert_eq!(
        (meter.spend().tokens, meter.implausible()),
        (1_128_000, None)
    );
    meter.push(message("n", 10, 0).as_bytes());
    meter.push(message("n", 1_128_011, 1).as_bytes());
    assert_eq!(
        meter.spend().tokens,
        1_128_010,
        "message n back at 10 tokens"
    );
    assert!(meter.implausible().is_some());

    let mut codex = Meter::new("codex");
    codex.push(b"{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":18446744073709551615,\"output_tokens\":9}}\n");
    assert_eq!(codex.spend().tokens, 0, "no overflow, nothing counted");
    assert!(codex.implausible().is_some());

    let mut grok = Meter::new("grok");
    grok.push(b"{\"type\":\"end\",\"usage\":{\"input_tokens\":10},\"total_cost_usd\":1e300}\n");
    assert_eq!(grok.spend(), Spend::default());
    assert!(grok.implausible().unwrap().claimed.usd > 1e299);

    // A flavor the meter cannot read claims nothing and is never flagged.
    let mut custom = Meter::new("mycli");
    custom.push(forged.as_bytes());
    assert_eq!(
        (custom.spend(), custom.implausible()),
        (Spend::default(), None)
    );
    assert_eq!(turn_ceiling("mycli"), None);
}
