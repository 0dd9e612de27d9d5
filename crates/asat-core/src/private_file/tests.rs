//! The checks as pure functions over a file's status (every owner and type, which a test
//! cannot always create for real: another user's files need root), and the choice of the
//! user's folder with a stand-in for `/dev/shm`.

use std::os::unix::fs::{symlink, PermissionsExt};

use super::*;

const ME: u32 = 1000;
const SIZE: u64 = 4096;

fn file(mode: u32, uid: u32, nlink: u64, size: u64) -> Status {
    Status {
        mode,
        uid,
        nlink,
        size,
        dev: 1,
        ino: 2,
    }
}

fn refused(r: Result<(), FileProblem>) -> String {
    match r {
        Err(FileProblem::Refused(m)) => m,
        other => panic!("not refused: {other:?}"),
    }
}

#[test]
fn a_private_file_of_the_right_or_zero_size_passes() {
    assert_eq!(
        check_file(&file(libc::S_IFREG | 0o600, ME, 1, SIZE), ME, SIZE),
        Ok(())
    );
    assert_eq!(
        check_file(&file(libc::S_IFREG | 0o400, ME, 1, SIZE), ME, SIZE),
        Ok(())
    );
    // Size 0: being created (see the module docs).
    assert_eq!(
        check_file(&file(libc::S_IFREG | 0o600, ME, 1, 0), ME, SIZE),
        Ok(())
    );
}

#[test]
fn a_file_of_another_owner_is_refused() {
    let m = refused(check_file(
        &file(libc::S_IFREG | 0o600, 0, 1, SIZE),
        ME,
        SIZE,
    ));
    assert!(m.contains("owned by uid 0, not by you (uid 1000)"), "{m}");
    let m = refused(check_file(
        &file(libc::S_IFREG | 0o600, 1001, 1, SIZE),
        ME,
        SIZE,
    ));
    assert!(m.contains("owned by uid 1001"), "{m}");
}

#[test]
fn a_file_open_to_the_group_or_others_is_refused() {
    for mode in [0o640, 0o604, 0o660, 0o606, 0o666, 0o610, 0o601] {
        let m = refused(check_file(
            &file(libc::S_IFREG | mode, ME, 1, SIZE),
            ME,
            SIZE,
        ));
        assert!(m.contains(&format!("has mode {mode:04o}")), "{m}");
        assert!(m.contains("must have no group or other permissions"), "{m}");
    }
}

#[test]
fn a_file_with_other_links_is_refused_and_one_with_none_is_opened_again() {
    let m = refused(check_file(
        &file(libc::S_IFREG | 0o600, ME, 2, SIZE),
        ME,
        SIZE,
    ));
    assert!(m.contains("has 2 hard links: must have exactly one"), "{m}");
    assert_eq!(
        check_file(&file(libc::S_IFREG | 0o600, ME, 0, SIZE), ME, SIZE),
        Err(FileProblem::Removed)
    );
}

#[test]
fn a_file_of_another_size_is_refused() {
    for size in [1, SIZE - 8, SIZE + 8, u64::MAX] {
        let m = refused(check_file(
            &file(libc::S_IFREG | 0o600, ME, 1, size),
            ME,
            SIZE,
        ));
        assert!(
            m.contains(&format!("is {size} bytes long: must be {SIZE} bytes")),
            "{m}"
        );
    }
}

#[test]
fn what_is_not_a_regular_file_is_refused() {
    for (ty, what) in [
        (libc::S_IFDIR, "a directory"),
        (libc::S_IFIFO, "a FIFO"),
        (libc::S_IFSOCK, "a socket"),
        (libc::S_IFCHR, "a character device"),
        (libc::S_IFBLK, "a block device"),
        (libc::S_IFLNK, "a symbolic link"),
    ] {
        let m = refused(check_file(&file(ty | 0o600, ME, 1, SIZE), ME, SIZE));
        assert!(
            m.contains(&format!("is {what}: must be a regular file")),
            "{m}"
        );
    }
}

#[test]
fn a_folder_must_be_a_directory_of_the_user_closed_to_others() {
    assert_eq!(
        check_dir(&file(libc::S_IFDIR | 0o700, ME, 2, 40), ME),
        Ok(())
    );
    assert_eq!(
        check_dir(&file(libc::S_IFDIR | 0o500, ME, 2, 40), ME),
        Ok(())
    );
    let e = check_dir(&file(libc::S_IFDIR | 0o700, 1001, 2, 40), ME).unwrap_err();
    assert!(
        e.contains("owned by uid 1001, not by you (uid 1000)"),
        "{e}"
    );
    for mode in [0o750, 0o705, 0o755, 0o777, 0o1777, 0o701, 0o710] {
        let e = check_dir(&file(libc::S_IFDIR | mode, ME, 2, 40), ME).unwrap_err();
        assert!(e.contains(&format!("has mode {mode:04o}")), "{e}");
    }
    let e = check_dir(&file(libc::S_IFREG | 0o700, ME, 1, 40), ME).unwrap_err();
    assert!(e.contains("is a regular file"), "{e}");
}

#[test]
fn relative_and_empty_folders_are_refused() {
    for p in ["", "shm", "./shm", "a/b"] {
        let e = absolute(Path::new(p), "folder").unwrap_err().to_string();
        assert!(
            e.contains("must be an absolute path (starting with /)"),
            "{p:?}: {e}"
        );
    }
    assert_eq!(
        absolute(Path::new("/a//b/./c/"), "folder").unwrap(),
        Path::new("/a/b/c")
    );
}

/// A stand-in for `/dev/shm`: world-writable with the sticky bit, as the real one.
fn fake_shm() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
    d
}

#[test]
fn without_xdg_runtime_dir_the_folder_is_made_private_under_shm() {
    let shm = fake_shm();
    for xdg in [None, Some(OsString::new())] {
        let d = user_dir_in(xdg, shm.path()).unwrap();
        let want = shm.path().join(format!("asat-u{}", sys::uid()));
        assert_eq!(d.path(), want);
        let m = std::fs::symlink_metadata(&want).unwrap();
        assert!(m.is_dir());
        assert_eq!(m.mode() & 0o777, 0o700);
    }
}

#[test]
fn a_squatted_or_open_folder_under_shm_is_refused() {
    let shm = fake_shm();
    let mine = shm.path().join(format!("asat-u{}", sys::uid()));
    // Made by someone with the group and others let in.
    std::fs::DirBuilder::new()
        .mode(0o777)
        .create(&mine)
        .unwrap();
    std::fs::set_permissions(&mine, std::fs::Permissions::from_mode(0o777)).unwrap();
    let e = user_dir_in(None, shm.path()).unwrap_err().to_string();
    assert!(e.contains("has mode 0777"), "{e}");
    assert!(
        e.contains("must be a directory (not a symbolic link) owned by you"),
        "{e}"
    );
    std::fs::remove_dir(&mine).unwrap();
    // A symbolic link to a folder of the planter's.
    let theirs = tempfile::tempdir().unwrap();
    symlink(theirs.path(), &mine).unwrap();
    let e = user_dir_in(None, shm.path()).unwrap_err().to_string();
    assert!(e.contains("is a symbolic link"), "{e}");
    std::fs::remove_file(&mine).unwrap();
    // A file.
    std::fs::write(&mine, b"").unwrap();
    let e = user_dir_in(None, shm.path()).unwrap_err().to_string();
    assert!(e.contains("is not a directory"), "{e}");
}

#[test]
fn xdg_runtime_dir_is_used_when_set_and_checked() {
    let shm = fake_shm();
    let xdg = tempfile::tempdir().unwrap();
    std::fs::set_permissions(xdg.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let d = user_dir_in(Some(xdg.path().into()), shm.path()).unwrap();
    assert_eq!(d.path(), xdg.path());
    assert_eq!(std::fs::read_dir(shm.path()).unwrap().count(), 0);
    let e = user_dir_in(Some("run/user".into()), shm.path())
        .unwrap_err()
        .to_string();
    assert!(e.contains("XDG_RUNTIME_DIR"), "{e}");
    assert!(e.contains("must be an absolute path"), "{e}");
    std::fs::set_permissions(xdg.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let e = user_dir_in(Some(xdg.path().into()), shm.path())
        .unwrap_err()
        .to_string();
    assert!(e.contains("has mode 0755"), "{e}");
    // Not created when missing.
    let gone = xdg.path().join("missing");
    let e = user_dir_in(Some(gone.clone().into()), shm.path())
        .unwrap_err()
        .to_string();
    assert!(e.contains("does not exist"), "{e}");
    assert!(!gone.exists());
}
