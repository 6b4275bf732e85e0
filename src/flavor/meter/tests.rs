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
