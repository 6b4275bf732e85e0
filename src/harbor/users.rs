//! Who a task's test.sh runs as (`[verifier] user`, docs/HARBOR.md §7): a name, a uid,
//! `uid:gid` or `name:group`, resolved against the `/etc/passwd` and `/etc/group` of the task's
//! *environment image*, never against a participant's final file system (which the participant
//! wrote, and could make `tester` uid 0 in). Unset, it is the environment image's configured
//! user (its Dockerfile's last `USER`), as Harbor runs test.sh (`docker exec` without `--user`),
//! resolved the same way. Pure: the caller reads the image's user and the two files through the
//! engine and gives them here.

/// The identity test.sh runs as, when it is not root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskUser {
    /// The uid (never 0: a user resolving to uid 0 is root, which needs no resolution).
    pub uid: u32,
    /// The gid: the one given, else the user's primary group in `/etc/passwd`.
    pub gid: u32,
    /// Its home folder in `/etc/passwd` (`HOME` for test.sh), when it has an entry.
    pub home: Option<String>,
}

/// Where the environment image's users and groups are read from.
pub const PASSWD: &str = "/etc/passwd";
/// Where the environment image's groups are read from.
pub const GROUP: &str = "/etc/group";

/// The value of a user (`[verifier] user`, or the environment image's configured one) that
/// needs the environment image's files to resolve it: `None` for the plain spellings of root
/// (none, empty, `root`, `0`); any other value (even `0:0`) is resolved, and means root only
/// when it resolves to uid 0.
pub fn needs_image(user: Option<&str>) -> Option<&str> {
    user.map(str::trim)
        .filter(|u| !u.is_empty() && *u != "root" && *u != "0")
}

/// Where the user test.sh runs as is named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// task.toml's `[verifier] user`.
    Verifier,
    /// The environment image's configured user (the Dockerfile's last `USER`, or the one of
    /// `[environment] docker_image`), when `[verifier] user` is unset.
    Image,
}

/// What a task's `[verifier] user` asks of the environment image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wanted<'a> {
    /// Root, whatever the image is (`root`, `0`).
    Root,
    /// This user, resolved in the image's files ([`needs_image`]).
    Named(&'a str),
    /// Unset (or empty): whoever the image's configuration names, as Harbor runs test.sh.
    ImageUser,
}

/// What `[verifier] user = user` asks for.
pub fn wanted(user: Option<&str>) -> Wanted<'_> {
    match user.map(str::trim) {
        None | Some("") => Wanted::ImageUser,
        Some(named) => needs_image(Some(named)).map_or(Wanted::Root, Wanted::Named),
    }
}

/// A user test.sh cannot run as: the value, where it was named, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unresolved {
    /// The value as named (empty when the image's configured user could not be read).
    pub user: String,
    /// Where it was named.
    pub source: Source,
    /// Why it cannot be resolved.
    pub message: String,
}

/// One line of `/etc/passwd` or `/etc/group`, split on `:`; comments and blank lines are none.
fn records(text: &str) -> impl Iterator<Item = Vec<&str>> {
    text.lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.split(':').collect::<Vec<_>>())
}

/// A passwd entry: name, uid, primary gid, home.
fn passwd_entry(
    passwd: &str,
    matches: impl Fn(&str, u32) -> bool,
) -> Option<(&str, u32, u32, &str)> {
    records(passwd).find_map(|fields| {
        let [name, _, uid, gid, _, home, ..] = fields[..] else {
            return None;
        };
        let (uid, gid) = (uid.parse::<u32>().ok()?, gid.parse::<u32>().ok()?);
        matches(name, uid).then_some((name, uid, gid, home))
    })
}

/// The gid of the group `name` in `/etc/group`.
fn group_gid(group: &str, name: &str) -> Option<u32> {
    records(group).find_map(|fields| match fields[..] {
        [group_name, _, gid, ..] if group_name == name => gid.parse().ok(),
        _ => None,
    })
}

/// Resolves `user` (`[verifier] user`) against the environment image's `passwd` and `group`:
/// `Ok(None)` when it is root (uid 0), else the uid, gid and home test.sh gets. A name or a
/// group the image does not have, or a bare uid without a passwd entry (its group would be
/// unknown), is an error saying so.
pub fn resolve(user: &str, passwd: &str, group: &str) -> Result<Option<TaskUser>, String> {
    let user = user.trim();
    let (who, group_part) = match user.split_once(':') {
        Some((who, group)) => (who.trim(), Some(group.trim())),
        None => (user, None),
    };
    let numeric = who.parse::<u32>().ok();
    let entry = match numeric {
        Some(uid) => passwd_entry(passwd, |_, id| id == uid),
        None => passwd_entry(passwd, |name, _| name == who),
    };
    let uid = match (numeric, entry) {
        (_, Some((_, uid, _, _))) => uid,
        (Some(uid), None) if group_part.is_some() => uid,
        (Some(uid), None) => {
            return Err(format!(
                "uid {uid} has no entry in the environment image's {PASSWD}, so its group is unknown"
            ));
        }
        (None, None) => {
            return Err(format!(
                "the environment image has no user `{who}` (none in its {PASSWD})"
            ));
        }
    };
    let gid = match group_part {
        None => entry.map_or(uid, |(_, _, gid, _)| gid),
        Some(text) => match text.parse::<u32>() {
            Ok(gid) => gid,
            Err(_) => group_gid(group, text).ok_or_else(|| {
                format!("the environment image has no group `{text}` (none in its {GROUP})")
            })?,
        },
    };
    if uid == 0 {
        return Ok(None);
    }
    Ok(Some(TaskUser {
        uid,
        gid,
        home: entry
            .map(|(_, _, _, home)| home.to_owned())
            .filter(|h| h.starts_with('/')),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PASSWD_TEXT: &str = "root:x:0:0:root:/root:/bin/bash\n\
        # a comment\n\
        daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n\
        \n\
        tester:x:1234:1300:Tester,,,:/home/tester:/bin/bash\n\
        broken:x:notanumber:1:x:/:/bin/sh\n\
        nohome:x:1500:1500::relative:/bin/sh\n";
    const GROUP_TEXT: &str = "root:x:0:\nstaff:x:50:tester\ntesters:x:1300:\n";

    fn user(uid: u32, gid: u32, home: Option<&str>) -> Option<TaskUser> {
        let home = home.map(str::to_owned);
        (uid != 0).then_some(TaskUser { uid, gid, home })
    }

    #[test]
    fn a_name_a_uid_and_their_groups_resolve_in_the_environment_images_files() {
        let resolved = |spec: &str| resolve(spec, PASSWD_TEXT, GROUP_TEXT);
        let tester = user(1234, 1300, Some("/home/tester"));
        assert_eq!(resolved("tester"), Ok(tester.clone()), "primary group");
        assert_eq!(resolved(" 1234 "), Ok(tester));
        assert_eq!(
            resolved("tester:staff"),
            Ok(user(1234, 50, Some("/home/tester")))
        );
        assert_eq!(
            resolved("tester:77"),
            Ok(user(1234, 77, Some("/home/tester")))
        );
        assert_eq!(
            resolved("1234:staff"),
            Ok(user(1234, 50, Some("/home/tester")))
        );
        assert_eq!(
            resolved("4242:4343"),
            Ok(user(4242, 4343, None)),
            "numbers need no entry"
        );
        assert_eq!(
            resolved("nohome"),
            Ok(user(1500, 1500, None)),
            "a relative home is none"
        );
    }

    #[test]
    fn a_user_resolving_to_uid_0_is_root() {
        for spec in ["root", "0", "root:staff", "0:0", "daemon:root"] {
            let resolved = resolve(spec, PASSWD_TEXT, GROUP_TEXT);
            let expected = if spec.starts_with("daemon") {
                user(1, 0, Some("/usr/sbin"))
            } else {
                None
            };
            assert_eq!(resolved, Ok(expected), "{spec}");
        }
        assert_eq!(needs_image(Some(" root ")), None);
        assert_eq!(needs_image(Some("0")), None);
        assert_eq!(needs_image(None), None);
        assert_eq!(needs_image(Some("tester")), Some("tester"));
        assert_eq!(needs_image(Some("0:0")), Some("0:0"));
    }

    #[test]
    fn an_unset_verifier_user_is_the_images_own_and_root_spelled_out_is_root() {
        assert_eq!(wanted(None), Wanted::ImageUser);
        assert_eq!(wanted(Some(" ")), Wanted::ImageUser);
        assert_eq!(wanted(Some("root")), Wanted::Root);
        assert_eq!(wanted(Some("0")), Wanted::Root);
        assert_eq!(wanted(Some(" tester ")), Wanted::Named("tester"));
        assert_eq!(wanted(Some("0:0")), Wanted::Named("0:0"));
    }

    #[test]
    fn an_unknown_user_or_group_or_a_bare_uid_without_an_entry_is_an_error() {
        for (spec, said) in [
            ("nobody", "no user `nobody`"),
            ("broken", "no user `broken`"),
            ("9999", "uid 9999 has no entry"),
            ("tester:wheel", "no group `wheel`"),
            ("nobody:staff", "no user `nobody`"),
        ] {
            let error = resolve(spec, PASSWD_TEXT, GROUP_TEXT).unwrap_err();
            assert!(error.contains(said), "{spec}: {error}");
        }
        assert!(resolve("tester", "", "").is_err(), "an image without users");
    }
}
