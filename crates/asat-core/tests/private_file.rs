//! `asat_core::private_file` on real files: what another user (or an accident) can leave at a
//! file's path or make of its folder is refused, and nothing is changed; a full file system is
//! a clear error at open; concurrent openers agree; descriptors do not leak into programs
//! started with `exec`; files nobody holds are removed, never one in use.
//!
//! The full-file-system test runs this test binary again (`current_exe`) under a file-size
//! limit with `CHILD_DIR_ENV` set: the test `child_role` then opens a file there and prints
//! the outcome. Without the variable, `child_role` does nothing.

use std::fs::{self, Permissions};
use std::io::{ErrorKind, Read};
use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Barrier};

use asat_core::private_file::PrivateDir;

const SIZE: u64 = 64 * 1024;
const CHILD_DIR_ENV: &str = "ASAT_PRIVATE_FILE_CHILD_DIR";

/// A fresh folder with mode 0700 (removed when dropped), in `/dev/shm` where there is one.
fn private_tmp() -> tempfile::TempDir {
    let base = if Path::new("/dev/shm").is_dir() {
        PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    let d = tempfile::Builder::new()
        .prefix("asat-private-test-")
        .tempdir_in(base)
        .unwrap();
    fs::set_permissions(d.path(), Permissions::from_mode(0o700)).unwrap();
    d
}

fn write_file(path: &Path, bytes: &[u8], mode: u32) {
    fs::write(path, bytes).unwrap();
    fs::set_permissions(path, Permissions::from_mode(mode)).unwrap();
}

fn open_err(dir: &PrivateDir, name: &str) -> String {
    dir.open_file(name, SIZE).unwrap_err().to_string()
}

#[test]
fn child_role() {
    let Some(dir) = std::env::var_os(CHILD_DIR_ENV) else {
        return;
    };
    match PrivateDir::named(&dir).and_then(|d| d.open_file("big", SIZE)) {
        Ok(_) => println!("RESULT OK"),
        Err(e) => println!("RESULT ERR {e}"),
    }
}

#[test]
fn a_new_file_is_private_reserved_and_found_again() {
    let tmp = private_tmp();
    let dir = PrivateDir::named(tmp.path()).unwrap();
    let f = dir.open_file("t", SIZE).unwrap();
    assert!(f.created());
    assert_eq!(f.path(), tmp.path().join("t"));
    let m = fs::symlink_metadata(f.path()).unwrap();
    assert!(m.is_file());
    assert_eq!(m.mode() & 0o777, 0o600);
    assert_eq!(m.len(), SIZE);
    assert!(
        m.blocks() * 512 >= SIZE,
        "not reserved: {} blocks",
        m.blocks()
    );
    let again = dir.open_file("t", SIZE).unwrap();
    assert!(!again.created());
    assert_eq!(again.id(), f.id());
    // A folder named with a trailing slash or `.` is the same folder.
    let same = PrivateDir::named(format!("{}/./", tmp.path().display())).unwrap();
    assert_eq!(same.open_file("t", SIZE).unwrap().id(), f.id());
}

#[test]
fn a_symbolic_link_at_the_path_is_refused_and_its_target_untouched() {
    let tmp = private_tmp();
    let dir = PrivateDir::named(tmp.path()).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let victim = elsewhere.path().join("victim");
    write_file(&victim, b"the victim's data", 0o644);
    symlink(&victim, tmp.path().join("t")).unwrap();
    let e = open_err(&dir, "t");
    assert!(e.contains("is a symbolic link"), "{e}");
    assert_eq!(fs::read(&victim).unwrap(), b"the victim's data");
    // A dangling link: its target is not created.
    let target = elsewhere.path().join("planted");
    symlink(&target, tmp.path().join("u")).unwrap();
    let e = open_err(&dir, "u");
    assert!(e.contains("is a symbolic link"), "{e}");
    assert!(!target.exists());
}

#[test]
fn a_file_open_to_the_group_or_others_is_refused_and_untouched() {
    let tmp = private_tmp();
    let dir = PrivateDir::named(tmp.path()).unwrap();
    for mode in [0o644, 0o660, 0o606, 0o666] {
        let path = tmp.path().join("t");
        write_file(&path, &[0; SIZE as usize], mode);
        let e = open_err(&dir, "t");
        assert!(e.contains(&format!("has mode {mode:04o}")), "{e}");
        assert!(e.contains("must have no group or other permissions"), "{e}");
        assert_eq!(fs::metadata(&path).unwrap().mode() & 0o777, mode);
        fs::remove_file(&path).unwrap();
    }
}

#[test]
fn a_file_of_another_size_is_refused_and_untouched() {
    let tmp = private_tmp();
    let dir = PrivateDir::named(tmp.path()).unwrap();
    let path = tmp.path().join("t");
    for len in [8, SIZE - 8, SIZE + 8] {
        let bytes: Vec<u8> = (0..len).map(|i| i as u8 | 1).collect();
        write_file(&path, &bytes, 0o600);
        let e = open_err(&dir, "t");
        assert!(
            e.contains(&format!("is {len} bytes long: must be {SIZE} bytes")),
            "{e}"
        );
        assert_eq!(fs::read(&path).unwrap(), bytes, "the file was changed");
    }
}

#[test]
fn a_zero_length_file_is_being_created_and_any_opener_completes_it() {
    let tmp = private_tmp();
    let dir = PrivateDir::named(tmp.path()).unwrap();
    let path = tmp.path().join("t");
    write_file(&path, b"", 0o600);
    let f = dir.open_file("t", SIZE).unwrap();
    assert!(!f.created());
    assert_eq!(fs::metadata(&path).unwrap().len(), SIZE);
}

#[test]
fn a_file_with_two_links_is_refused() {
    let tmp = private_tmp();
    let dir = PrivateDir::named(tmp.path()).unwrap();
    let f = dir.open_file("t", SIZE).unwrap();
    fs::hard_link(f.path(), tmp.path().join("other-name")).unwrap();
    let e = open_err(&dir, "t");
    assert!(e.contains("has 2 hard links: must have exactly one"), "{e}");
}

#[test]
fn a_directory_or_a_socket_at_the_path_is_refused() {
    let tmp = private_tmp();
    let dir = PrivateDir::named(tmp.path()).unwrap();
    fs::create_dir(tmp.path().join("d")).unwrap();
    let e = open_err(&dir, "d");
    assert!(e.contains("is a directory"), "{e}");
    let _socket = std::os::unix::net::UnixListener::bind(tmp.path().join("s")).unwrap();
    let e = open_err(&dir, "s");
    assert!(e.contains("is not a regular file"), "{e}");
    for name in ["", ".", "..", "a/b"] {
        let e = open_err(&dir, name);
        assert!(e.contains("must be one path component"), "{e}");
    }
}

#[test]
fn bad_folders_are_refused() {
    for p in ["", "relative", "./x"] {
        let e = PrivateDir::named(p).unwrap_err().to_string();
        assert!(e.contains("must be an absolute path"), "{p:?}: {e}");
        assert!(!Path::new("relative").exists());
    }
    let tmp = private_tmp();
    // Open to the group or others.
    let open = tmp.path().join("open");
    fs::create_dir(&open).unwrap();
    fs::set_permissions(&open, Permissions::from_mode(0o755)).unwrap();
    let e = PrivateDir::named(&open).unwrap_err().to_string();
    assert!(e.contains("has mode 0755"), "{e}");
    assert!(
        e.contains("with no permissions for the group or others (mode 0700)"),
        "{e}"
    );
    assert_eq!(fs::metadata(&open).unwrap().mode() & 0o777, 0o755);
    // A symbolic link to a private folder (with or without a trailing slash).
    let real = tmp.path().join("real");
    fs::create_dir(&real).unwrap();
    fs::set_permissions(&real, Permissions::from_mode(0o700)).unwrap();
    let link = tmp.path().join("link");
    symlink(&real, &link).unwrap();
    for p in [link.clone(), PathBuf::from(format!("{}/", link.display()))] {
        let e = PrivateDir::named(&p).unwrap_err().to_string();
        assert!(e.contains("is a symbolic link"), "{p:?}: {e}");
    }
    // A file.
    let file = tmp.path().join("file");
    write_file(&file, b"", 0o600);
    let e = PrivateDir::named(&file).unwrap_err().to_string();
    assert!(e.contains("is not a directory"), "{e}");
    // A missing folder is created, with mode 0700, but not its parents.
    let new = tmp.path().join("new");
    PrivateDir::named(&new).unwrap();
    assert_eq!(fs::metadata(&new).unwrap().mode() & 0o777, 0o700);
    let e = PrivateDir::named(tmp.path().join("a/b"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("cannot create it"), "{e}");
}

/// Another user's folder and file, for real where this process can make them (as root);
/// the checks themselves are unit-tested over every owner in `src/private_file/tests.rs`.
#[test]
fn another_users_folder_and_file_are_refused() {
    let me = fs::metadata("/proc/self").unwrap().uid();
    let tmp = private_tmp();
    let nobody = 65534;
    let theirs = tmp.path().join("theirs");
    fs::create_dir(&theirs).unwrap();
    fs::set_permissions(&theirs, Permissions::from_mode(0o700)).unwrap();
    match std::os::unix::fs::chown(&theirs, Some(nobody), None) {
        Ok(()) => {
            let e = PrivateDir::named(&theirs).unwrap_err().to_string();
            assert!(
                e.contains(&format!("is owned by uid {nobody}, not by you (uid {me})")),
                "{e}"
            );
            // A file of theirs in a folder of ours.
            let dir = PrivateDir::named(tmp.path()).unwrap();
            let path = tmp.path().join("t");
            write_file(&path, b"", 0o600);
            std::os::unix::fs::chown(&path, Some(nobody), None).unwrap();
            let e = open_err(&dir, "t");
            assert!(
                e.contains(&format!("is owned by uid {nobody}, not by you (uid {me})")),
                "{e}"
            );
            assert_eq!(fs::metadata(&path).unwrap().len(), 0);
        }
        Err(e) if e.kind() == ErrorKind::PermissionDenied => {
            // Not root: `/` is another user's (root's) folder.
            assert_ne!(me, 0);
            let e = PrivateDir::named("/").unwrap_err().to_string();
            assert!(
                e.contains(&format!("is owned by uid 0, not by you (uid {me})")),
                "{e}"
            );
        }
        Err(e) => panic!("chown: {e}"),
    }
}

/// A file system that cannot give the file its space: a file-size limit (`RLIMIT_FSIZE`, set
/// with the shell's `ulimit -f`, which any user can lower) makes `fallocate` fail as a full
/// tmpfs does (`EFBIG` here, `ENOSPC` there), in a child process. The open fails with a clear
/// error, nothing is mapped (no `SIGBUS`), and the file is left at size 0, which the next
/// opener completes.
#[test]
fn a_file_system_without_room_is_a_clear_error_at_open() {
    let tmp = private_tmp();
    let out = Command::new("sh")
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 8 && exec \"$0\" \"$@\"")
        .arg(std::env::current_exe().unwrap())
        .args(["child_role", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_DIR_ENV, tmp.path())
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    assert!(out.status.success(), "the child failed: {}", out.status);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let result = stdout
        .lines()
        .find_map(|l| l.split_once("RESULT ").map(|(_, r)| r.to_owned()))
        .unwrap_or_else(|| panic!("no result from the child: {stdout}"));
    assert!(
        result.starts_with("ERR ") && result.contains(&format!("cannot reserve its {SIZE} bytes")),
        "{result}"
    );
    let path = tmp.path().join("big");
    assert_eq!(fs::metadata(&path).unwrap().len(), 0);
    let f = PrivateDir::named(tmp.path())
        .unwrap()
        .open_file("big", SIZE)
        .unwrap();
    assert!(!f.created());
    assert_eq!(fs::metadata(&path).unwrap().len(), SIZE);
}

#[test]
fn the_descriptors_are_closed_on_exec() {
    let tmp = private_tmp();
    let dir = PrivateDir::named(tmp.path()).unwrap();
    let f = dir.open_file("t", SIZE).unwrap();
    let mut out = String::new();
    Command::new("sh")
        .arg("-c")
        .arg("for f in /proc/$$/fd/*; do readlink \"$f\"; done")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap()
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    assert!(
        out.contains("/proc/") || out.contains("pipe:"),
        "no descriptors listed: {out}"
    );
    let folder = tmp.path().to_string_lossy();
    assert!(
        !out.contains(&*folder),
        "a descriptor of {folder} leaked into exec: {out}"
    );
    drop(f);
}

#[test]
fn concurrent_openers_get_one_ready_file() {
    let tmp = private_tmp();
    let dir = Arc::new(PrivateDir::named(tmp.path()).unwrap());
    for round in 0..50 {
        let name = format!("t{round}");
        let start = Arc::new(Barrier::new(4));
        let openers: Vec<_> = (0..4)
            .map(|_| {
                let (dir, start, name) = (dir.clone(), start.clone(), name.clone());
                std::thread::spawn(move || {
                    start.wait();
                    let f = dir.open_file(&name, SIZE).unwrap();
                    (f.id(), f.created(), f.file().metadata().unwrap().len())
                })
            })
            .collect();
        let got: Vec<_> = openers.into_iter().map(|t| t.join().unwrap()).collect();
        assert!(got.iter().all(|g| g.0 == got[0].0), "{got:?}");
        assert_eq!(got.iter().filter(|g| g.1).count(), 1, "{got:?}");
        assert!(got.iter().all(|g| g.2 == SIZE), "{got:?}");
    }
}

#[test]
fn only_files_that_nobody_holds_are_removed() {
    let tmp = private_tmp();
    let dir = PrivateDir::named(tmp.path()).unwrap();
    let held = dir.open_file("t-held", SIZE).unwrap();
    drop(dir.open_file("t-left", SIZE).unwrap());
    write_file(&tmp.path().join("other"), b"x", 0o600);
    fs::create_dir(tmp.path().join("t-folder")).unwrap();
    symlink(tmp.path().join("t-held"), tmp.path().join("t-link")).unwrap();
    assert_eq!(dir.remove_unused(|n| n.starts_with("t-")), 1);
    let mut left: Vec<String> = fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    assert_eq!(left, ["other", "t-folder", "t-held", "t-link"]);
    // A second opening holds it too: the first one's leaving does not remove it.
    let again = dir.open_file("t-held", SIZE).unwrap();
    assert!(!dir.remove_if_last("t-held", held.file()).unwrap());
    drop(held);
    assert_eq!(dir.remove_unused(|n| n == "t-held"), 0);
    assert!(tmp.path().join("t-held").exists());
    // The last one's leaving does.
    assert!(dir.remove_if_last("t-held", again.file()).unwrap());
    assert!(!tmp.path().join("t-held").exists());
}

#[test]
fn a_file_is_not_removed_when_its_name_is_another_file_now() {
    let tmp = private_tmp();
    let dir = PrivateDir::named(tmp.path()).unwrap();
    let old = dir.open_file("t", SIZE).unwrap();
    fs::remove_file(tmp.path().join("t")).unwrap();
    let new = dir.open_file("t", SIZE).unwrap();
    drop(new);
    // `old` is no longer at the name: leaving it removes nothing.
    assert!(!dir.remove_if_last("t", old.file()).unwrap());
    assert!(tmp.path().join("t").exists());
}

/// Openers and removers at once: every opener finds its file at the name, with one link, for
/// as long as it holds it.
#[test]
fn openers_and_removers_at_once_never_remove_a_file_in_use() {
    let tmp = private_tmp();
    let dir = Arc::new(PrivateDir::named(tmp.path()).unwrap());
    let path = tmp.path().join("t");
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let removers: Vec<_> = (0..2)
        .map(|_| {
            let (dir, done) = (dir.clone(), done.clone());
            std::thread::spawn(move || {
                let mut removed = 0;
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    removed += dir.remove_unused(|n| n == "t");
                }
                removed
            })
        })
        .collect();
    let openers: Vec<_> = (0..3)
        .map(|_| {
            let (dir, path) = (dir.clone(), path.clone());
            std::thread::spawn(move || {
                for _ in 0..300 {
                    let f = dir.open_file("t", SIZE).unwrap();
                    let mine = f.file().metadata().unwrap();
                    for _ in 0..3 {
                        let at = fs::symlink_metadata(&path).expect("a file in use was removed");
                        assert_eq!((at.ino(), mine.nlink()), (mine.ino(), 1));
                        std::thread::yield_now();
                    }
                }
            })
        })
        .collect();
    for o in openers {
        o.join().unwrap();
    }
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    for r in removers {
        r.join().unwrap();
    }
    // Nobody holds it now (if the removers left it).
    dir.remove_unused(|n| n == "t");
    assert!(!path.exists());
}
