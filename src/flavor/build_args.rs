//! Build arguments for flavor images (`MULTICOOKER_BUILD_ARGS`): the packaged Dockerfiles
//! declare `ARG BASE_IMAGE` and `ARG <CLI>_SOURCE` so a test or a mirror swaps only the base
//! image and where the CLI comes from. multicooker applies them by setting the default of each
//! `ARG` line the Dockerfile declares under that name, inside the build context: the values are
//! then part of the context's content hash, so an image built with other arguments never stands
//! under the tag of one built without them, and every backend builds it the same way (the
//! legacy builder of docker 20.10 included).

use super::FlavorError;

/// One build argument.
pub type BuildArg = (String, String);

/// Parses `NAME=value,…`. Names are shell-style identifiers; values hold no whitespace, quote,
/// backslash or `$` (image references and versions need none), so a Dockerfile line cannot be
/// broken by one.
pub fn parse(text: &str) -> Result<Vec<BuildArg>, FlavorError> {
    let mut args: Vec<BuildArg> = Vec::new();
    for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let invalid = |reason: &str| FlavorError::BuildArgs {
            item: item.to_owned(),
            reason: reason.to_owned(),
        };
        let (name, value) = item
            .split_once('=')
            .ok_or_else(|| invalid("expected NAME=value"))?;
        let name_ok = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !name_ok {
            return Err(invalid("the name is not an ARG name"));
        }
        if value.is_empty()
            || value
                .chars()
                .any(|c| c.is_whitespace() || matches!(c, '"' | '\'' | '\\' | '$'))
        {
            return Err(invalid(
                "the value is empty or holds whitespace, a quote, `\\` or `$`",
            ));
        }
        if args.iter().any(|(n, _)| n == name) {
            return Err(invalid("the name is given twice"));
        }
        args.push((name.to_owned(), value.to_owned()));
    }
    Ok(args)
}

/// The Dockerfile with every `ARG <name>` or `ARG <name>=<default>` line of a given argument
/// set to its value; other lines, and arguments the Dockerfile does not declare, unchanged.
pub fn apply(dockerfile: &str, args: &[BuildArg]) -> String {
    if args.is_empty() {
        return dockerfile.to_owned();
    }
    let mut out = String::with_capacity(dockerfile.len());
    for line in dockerfile.split_inclusive('\n') {
        let declared = line
            .trim_start()
            .strip_prefix("ARG ")
            .map(|rest| rest.trim().split('=').next().unwrap_or_default().trim());
        match declared.and_then(|name| args.iter().find(|(n, _)| n == name)) {
            Some((name, value)) => {
                let indent = &line[..line.len() - line.trim_start().len()];
                out.push_str(&format!("{indent}ARG {name}={value}\n"));
            }
            None => out.push_str(line),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_pairs_and_refuses_what_would_break_a_dockerfile() {
        assert_eq!(
            parse(" BASE_IMAGE=mc-test:1 , CLAUDE_SOURCE=mc-cli@sha256:ab ,").unwrap(),
            [
                ("BASE_IMAGE".to_owned(), "mc-test:1".to_owned()),
                ("CLAUDE_SOURCE".to_owned(), "mc-cli@sha256:ab".to_owned()),
            ]
        );
        assert!(parse("").unwrap().is_empty());
        for bad in [
            "NOVALUE", "1X=a", "A=", "A=b c", "A=$(id)", "A=\"x\"", "A=1,A=2",
        ] {
            let error = parse(bad).unwrap_err();
            assert!(matches!(error, FlavorError::BuildArgs { .. }), "{bad}");
        }
    }

    #[test]
    fn sets_declared_args_only() {
        let dockerfile = "ARG BASE_IMAGE=debian:12-slim\nARG OTHER=1\nFROM ${BASE_IMAGE} AS d\n  ARG BASE_IMAGE\nRUN echo ARG BASE_IMAGE=x\n";
        let args = parse("BASE_IMAGE=mc-test:1,UNUSED=2").unwrap();
        assert_eq!(
            apply(dockerfile, &args),
            "ARG BASE_IMAGE=mc-test:1\nARG OTHER=1\nFROM ${BASE_IMAGE} AS d\n  ARG BASE_IMAGE=mc-test:1\nRUN echo ARG BASE_IMAGE=x\n"
        );
        assert_eq!(apply(dockerfile, &[]), dockerfile);
    }
}
