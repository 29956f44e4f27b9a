//! The arguments a sandbox is built from, as bubblewrap reads them in order.

use super::*;
use crate::agent::sandbox::hidden::HiddenPath;

fn bwrap(privilege: Privilege) -> Arc<Bubblewrap> {
    Arc::new(Bubblewrap {
        path: PathBuf::from("/usr/bin/bwrap"),
        version: "bubblewrap 0".into(),
        privilege,
    })
}

fn sandbox(hidden: &[HiddenPath], cwd: Option<&Path>) -> Sandbox {
    Sandbox::new(
        bwrap(Privilege::User),
        Hidden::resolve(hidden),
        false,
        cwd.map(Path::to_path_buf),
    )
}

fn words(argv: &[OsString]) -> Vec<String> {
    argv.iter().map(|a| a.to_string_lossy().into_owned()).collect()
}

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// The position of `flag` followed by `args` in `argv`.
fn at(argv: &[String], flag: &str, args: &[&str]) -> Option<usize> {
    let want: Vec<&str> = std::iter::once(flag).chain(args.iter().copied()).collect();
    argv.windows(want.len())
        .position(|w| w.iter().map(String::as_str).eq(want.iter().copied()))
}

/// A temporary directory by its resolved path.
fn temp() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().canonicalize().unwrap();
    (dir, real)
}

#[test]
fn tool_directories_widen_to_their_root_but_never_to_home_or_root() {
    let (_dir, base) = temp();
    let bin = base.join("py/bin");
    std::fs::create_dir_all(&bin).unwrap();
    let path = std::env::join_paths([&bin, Path::new("/usr/bin"), Path::new("/bin")]).unwrap();
    let dirs: Vec<PathBuf> = path_dirs(path.to_str().unwrap())
        .into_iter()
        .map(|r| r.path)
        .collect();
    assert_eq!(dirs[0], base.join("py"));
    assert_eq!(dirs[1], PathBuf::from("/usr"));
    assert_ne!(dirs[2], PathBuf::from("/"), "{dirs:?}");
}

#[test]
fn the_command_comes_last_and_everything_else_is_read_only_or_bounded() {
    let argv = words(&sandbox(&[], None).argv(&["true".into(), "x y".into()], ""));
    let end = argv.iter().position(|a| a == "--").unwrap();
    assert_eq!(&argv[end + 1..], ["true", "x y"]);
    for flag in [
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--disable-userns",
    ] {
        assert!(argv[..end].contains(&flag.to_string()), "{flag}");
    }
    assert!(!argv.contains(&"--share-net".to_string()));
    assert!(at(&argv, "--chdir", &[PRIVATE_CWD]).is_some());
    assert!(at(&argv, "--ro-bind-try", &["/proc/sys", "/proc/sys"]).is_some());
    // Every tmpfs has a size; the root, /dev and every cover end read-only.
    let tmpfs: Vec<usize> = argv
        .iter()
        .enumerate()
        .filter(|(_, a)| *a == "--tmpfs")
        .map(|(i, _)| i)
        .collect();
    assert!(tmpfs.len() >= 3, "{argv:?}");
    for i in tmpfs {
        assert_eq!(argv[i - 4], "--size", "{argv:?}");
    }
    let shm = at(&argv, "--tmpfs", &["/dev/shm"]).unwrap();
    let dev_ro = at(&argv, "--remount-ro", &["/dev"]).unwrap();
    assert!(shm < dev_ro);
    assert_eq!(at(&argv, "--remount-ro", &["/"]), Some(end - 2));
}

#[test]
fn as_root_the_command_runs_through_the_shim_with_only_the_capabilities_to_drop_to_nobody() {
    let sandbox = Sandbox::new(
        bwrap(Privilege::Root { userns: Some(7) }),
        Hidden::default(),
        false,
        None,
    );
    let argv = words(&sandbox.argv(&["true".into()], ""));
    let end = argv.iter().position(|a| a == "--").unwrap();
    assert_eq!(&argv[end + 2..], [SHIM, "--", "true"]);
    assert!(at(&argv, "--userns", &["7"]).is_some());
    assert!(!argv.contains(&"--unshare-all".to_string()) && !argv.contains(&"--uid".to_string()));
    let caps: Vec<&String> = argv
        .windows(2)
        .filter(|w| w[0] == "--cap-add")
        .map(|w| &w[1])
        .collect();
    assert_eq!(caps, ["CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP"]);
    assert_eq!(sandbox.inherited_fd(), Some(7));
}

#[test]
fn only_the_files_a_command_names_are_bound_not_their_directory() {
    let (_dir, base) = temp();
    let mine = base.join("mine.py");
    let theirs = base.join("theirs.py");
    std::fs::write(&mine, "").unwrap();
    std::fs::write(&theirs, "").unwrap();
    let argv = words(&sandbox(&[], None).argv(&["python3".into(), s(&mine)], ""));
    assert!(
        at(&argv, "--ro-bind", &[&s(&mine), &s(&mine)]).is_some(),
        "{argv:?}"
    );
    assert!(
        at(&argv, "--ro-bind", &[&s(&base), &s(&base)]).is_none(),
        "{argv:?}"
    );
    assert!(!argv.contains(&s(&theirs)), "{argv:?}");
}

#[test]
fn a_path_through_a_link_is_bound_where_it_resolves_and_the_link_made_again() {
    let (_dir, base) = temp();
    std::fs::create_dir(base.join("real")).unwrap();
    std::fs::write(base.join("real/bot.py"), "").unwrap();
    std::os::unix::fs::symlink(base.join("real"), base.join("link")).unwrap();
    let written = s(&base.join("link/bot.py"));
    let argv = words(&sandbox(&[], None).argv(&["python3".into(), written], ""));
    let real = s(&base.join("real/bot.py"));
    assert!(at(&argv, "--ro-bind", &[&real, &real]).is_some(), "{argv:?}");
    let link = s(&base.join("link"));
    assert!(
        at(&argv, "--symlink", &[&s(&base.join("real")), &link]).is_some(),
        "{argv:?}"
    );
}

#[test]
fn hidden_paths_in_a_shown_directory_are_covered_read_only_and_never_shown_again() {
    let (_dir, base) = temp();
    let records = base.join("records");
    std::fs::create_dir(&records).unwrap();
    let key = base.join("judge.key");
    std::fs::write(&key, "").unwrap();
    let hidden = [
        HiddenPath::record(records.join("r.jsonl")),
        HiddenPath::file(&key),
    ];
    let s_ = sandbox(&hidden, Some(&base));
    let argv = words(&s_.argv(&["true".into()], ""));
    let r = s(&records);
    let bound = at(&argv, "--ro-bind", &[&s(&base), &s(&base)]).expect("the agent's directory");
    let covered = at(&argv, "--tmpfs", &[&r]).expect("covered");
    assert!(bound < covered);
    assert!(at(&argv, "--remount-ro", &[&r]).unwrap() > covered);
    assert!(at(&argv, "--ro-bind", &["/dev/null", &s(&key)]).unwrap() > bound);
    assert!(!argv[covered..]
        .windows(2)
        .any(|w| w[0] == "--ro-bind" && w[1].starts_with(&r)));
    // A command naming what is hidden, by any spelling, is refused.
    std::fs::write(records.join("r.jsonl"), "").unwrap();
    let spelled = format!("{}/records/../records/./r.jsonl", s(&base));
    assert_eq!(
        s_.check(&["cat".into(), spelled]),
        Err(Refusal::NamesHidden(records.join("r.jsonl")))
    );
    assert_eq!(
        s_.check(&["cat".into(), s(&key)]),
        Err(Refusal::NamesHidden(key.clone()))
    );
}

#[test]
fn a_record_written_where_the_agent_starts_is_refused() {
    let (_dir, base) = temp();
    let s_ = sandbox(&[HiddenPath::record(base.join("r.jsonl"))], Some(&base));
    assert!(matches!(
        s_.check(&["true".into()]),
        Err(Refusal::RecordInCwd { .. })
    ));
}

#[test]
fn another_seats_file_in_this_agents_directory_is_refused() {
    let (_dir, base) = temp();
    for f in ["a.py", "b.py"] {
        std::fs::write(base.join(f), "").unwrap();
    }
    let s_ = sandbox(&[], Some(&base));
    let a = ["python3".to_string(), s(&base.join("a.py"))];
    let b = ["python3".to_string(), s(&base.join("b.py"))];
    assert!(matches!(
        s_.check_apart(&a, &b),
        Err(Refusal::SeesOtherSeat { .. })
    ));
    assert_eq!(s_.check_apart(&a, &a), Ok(()));
    assert_eq!(sandbox(&[], None).check_apart(&a, &b), Ok(()));
}
