//! The shared load table's file against what another user, or a faulty process of the user,
//! can do to it (see the `shm` module docs): a symbolic link or a file open to others at its
//! path, a file of another size, with two links or of another owner, a folder open to others
//! or a link, a relative or empty `ASAT_POOLS_SHM_DIR`, all slots held, hostile contents; and
//! the rule that only pools of the detected machine use the machine-wide table.
//!
//! Tests that need an environment (`ASAT_POOLS_SHM_DIR`, `XDG_RUNTIME_DIR`) run this test
//! binary again (`current_exe`) with `ROLE_ENV` set: the test `child_role` then plays the role
//! and prints `RESULT ...`. Without the variable, `child_role` does nothing.
//!
//! The tests run one at a time ([`serial`]): a child process that one test starts holds, from
//! its `fork` to its `exec`, every open file description of this process, and with them the
//! slot locks another test takes and then releases by closing its file.

use std::ffi::OsStr;
use std::fs::{self, File, OpenOptions, Permissions};
use std::io::ErrorKind;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{symlink, FileExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};

use asat_core::{CpuSet, Runtime};
use asat_pools::{LoadTable, PoolKind, PoolPolicy, Pools, SharedTable, Topology, SLOTS};

const ROLE_ENV: &str = "ASAT_POOLS_TEST_ROLE";
const XML_ENV: &str = "ASAT_POOLS_TEST_XML";
const DIR_ENV: &str = "ASAT_POOLS_SHM_DIR";

/// Held by each test: one at a time (see the module docs).
fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Two pools of two CPUs; `real` declares them this machine's (machine-wide).
fn pools(real: bool) -> Pools {
    let a: CpuSet = [0, 1].into_iter().collect();
    let b: CpuSet = [2, 3].into_iter().collect();
    Pools::new(vec![a, b], real).unwrap()
}

/// The table's size in bytes for two pools.
const LEN: u64 = ((8 + SLOTS * 3) * 8) as u64;

/// A fresh folder with mode 0700 (removed when dropped), in `/dev/shm` where there is one.
fn private_tmp() -> tempfile::TempDir {
    let base = if Path::new("/dev/shm").is_dir() {
        PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    let d = tempfile::Builder::new()
        .prefix("asat-pools-file-")
        .tempdir_in(base)
        .unwrap();
    fs::set_permissions(d.path(), Permissions::from_mode(0o700)).unwrap();
    d
}

/// Where the table of `pools` is in `dir`.
fn table_path(dir: &Path, pools: &Pools) -> PathBuf {
    let model = if pools.is_machine_wide() {
        ""
    } else {
        "model-"
    };
    dir.join(format!("asat-pools-{model}{:016x}", pools.fingerprint()))
}

fn write_file(path: &Path, bytes: &[u8], mode: u32) {
    fs::write(path, bytes).unwrap();
    fs::set_permissions(path, Permissions::from_mode(mode)).unwrap();
}

fn open_err(dir: &Path, pools: &Pools) -> String {
    SharedTable::open_in(dir, pools).unwrap_err().to_string()
}

/// Takes the slot locks `start..start + len` through `file` (a process of its own, for the
/// kernel's open-file-description locks). False if another holds one of them.
fn lock_slots(file: &File, start: usize, len: usize) -> bool {
    // SAFETY: flock is plain data; all-zeroes is a valid value, and l_pid must be 0 for OFD
    // locks.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = libc::F_WRLCK as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_start = start as libc::off_t;
    fl.l_len = len as libc::off_t;
    // SAFETY: `fl` is a valid flock for F_OFD_SETLK and the descriptor is open.
    unsafe { libc::fcntl(file.as_raw_fd(), libc::F_OFD_SETLK, &mut fl) == 0 }
}

fn put(file: &File, word: usize, value: u64) {
    file.write_all_at(&value.to_ne_bytes(), (word * 8) as u64)
        .unwrap();
}

/// Runs `child_role` as `role` with `env` (None removes a variable); returns what it printed
/// after `RESULT `.
fn child(role: &str, env: &[(&str, Option<&OsStr>)]) -> String {
    let stdout = child_stdout(role, env);
    stdout
        .lines()
        .find_map(|l| l.split_once("RESULT ").map(|(_, r)| r.to_owned()))
        .unwrap_or_else(|| panic!("the child printed no result: {stdout}"))
}

/// What the child printed; it succeeded.
fn child_stdout(role: &str, env: &[(&str, Option<&OsStr>)]) -> String {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["child_role", "--exact", "--nocapture", "--test-threads=1"])
        .env(ROLE_ENV, role)
        .env_remove(DIR_ENV)
        .env_remove("XDG_RUNTIME_DIR")
        .stderr(Stdio::inherit());
    for (k, v) in env {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "the child failed: {}: {stdout}",
        out.status
    );
    stdout
}

/// - `build`: builds a job on machine-wide pools with the default table; prints `OK` or
///   `ERR <error>`.
/// - `model`: the machine-wide table (in `ASAT_POOLS_SHM_DIR`) against the pools of this
///   machine's topology read back from XML (`XML_ENV`) and of a synthetic one; prints `OK`,
///   or panics.
#[test]
fn child_role() {
    let Some(role) = std::env::var_os(ROLE_ENV) else {
        return;
    };
    match role.to_str() {
        Some("build") => match PoolPolicy::builder(pools(true)).pin(false).build() {
            Ok(_policy) => {
                // The files while the policy holds its table (the last user removes a file).
                for f in fs::read_dir(SharedTable::default_dir().unwrap()).unwrap() {
                    println!("FILE {}", f.unwrap().path().display());
                }
                println!("RESULT OK");
            }
            Err(e) => println!("RESULT ERR {e}"),
        },
        Some("model") => {
            let real = Topology::detect().unwrap().pools(PoolKind::Numa).unwrap();
            let xml = Topology::from_xml_file(std::env::var_os(XML_ENV).unwrap()).unwrap();
            assert!(!xml.is_detected());
            let xml = xml.pools(PoolKind::Numa).unwrap();
            let synthetic = Topology::synthetic("node:2 core:2 pu:1").unwrap();
            let synthetic = synthetic.pools(PoolKind::Numa).unwrap();
            assert!(real.is_machine_wide());
            assert!(!xml.is_machine_wide() && !synthetic.is_machine_wide());
            for p in [&xml, &synthetic] {
                let e = SharedTable::open(p).unwrap_err().to_string();
                assert!(e.contains("only for pools of the detected machine"), "{e}");
            }
            let job = |p: &Pools| {
                PoolPolicy::builder(p.clone())
                    .pin(false)
                    .desired(1)
                    .build()
                    .unwrap()
            };
            let real_job = job(&real);
            let (xml_a, xml_b, synthetic_job) = (job(&xml), job(&xml), job(&synthetic));
            // The model machine's jobs share a table of their own, in this process.
            assert!(Arc::ptr_eq(xml_a.table(), xml_b.table()));
            assert_eq!(xml_a.table().loads().iter().sum::<u32>(), 2);
            assert_eq!(synthetic_job.table().loads().iter().sum::<u32>(), 1);
            // The real table holds the real job's master only.
            let shared = SharedTable::open(&real).unwrap();
            assert_eq!(shared.loads().iter().sum::<u32>(), 1);
            assert_eq!(shared.own_loads().iter().sum::<u32>(), 1);
            // The files while the jobs hold them (the last user removes a file).
            let dir = std::env::var_os(DIR_ENV).unwrap();
            for f in fs::read_dir(dir).unwrap() {
                println!("FILE {}", f.unwrap().path().display());
            }
            drop((real_job, xml_a, xml_b, synthetic_job));
            println!("RESULT OK");
        }
        _ => panic!("unknown role {role:?}"),
    }
}

#[test]
fn the_table_is_a_private_file_named_by_its_kind_of_pools() {
    let _serial = serial();
    let tmp = private_tmp();
    let real = SharedTable::open_in(tmp.path(), &pools(true)).unwrap();
    let model = SharedTable::open_in(tmp.path(), &pools(false)).unwrap();
    assert_eq!(pools(true).fingerprint(), pools(false).fingerprint());
    assert_eq!(real.path(), table_path(tmp.path(), &pools(true)));
    assert_eq!(model.path(), table_path(tmp.path(), &pools(false)));
    assert_ne!(real.path(), model.path());
    for t in [&real, &model] {
        let m = fs::symlink_metadata(t.path()).unwrap();
        assert!(m.is_file());
        assert_eq!(m.mode() & 0o777, 0o600);
        assert_eq!(m.len(), LEN);
        assert!(m.blocks() * 512 >= LEN, "the file's space is not reserved");
    }
    model.add(0, 3);
    assert_eq!(real.loads(), vec![0, 0]);
}

#[test]
fn a_symbolic_link_at_the_tables_path_is_refused_and_its_target_untouched() {
    let _serial = serial();
    let tmp = private_tmp();
    let elsewhere = tempfile::tempdir().unwrap();
    let victim = elsewhere.path().join("victim");
    write_file(&victim, b"the victim's file", 0o644);
    symlink(&victim, table_path(tmp.path(), &pools(false))).unwrap();
    let e = open_err(tmp.path(), &pools(false));
    assert!(e.contains("is a symbolic link"), "{e}");
    assert_eq!(fs::read(&victim).unwrap(), b"the victim's file");
}

#[test]
fn a_table_file_open_to_others_or_with_two_links_is_refused() {
    let _serial = serial();
    let tmp = private_tmp();
    let path = table_path(tmp.path(), &pools(false));
    for mode in [0o666, 0o660, 0o604] {
        write_file(&path, &vec![0; LEN as usize], mode);
        let e = open_err(tmp.path(), &pools(false));
        assert!(e.contains(&format!("has mode {mode:04o}")), "{e}");
        fs::remove_file(&path).unwrap();
    }
    write_file(&path, &vec![0; LEN as usize], 0o600);
    fs::hard_link(&path, tmp.path().join("another-name")).unwrap();
    let e = open_err(tmp.path(), &pools(false));
    assert!(e.contains("has 2 hard links"), "{e}");
}

#[test]
fn a_table_file_of_another_size_is_refused_and_untouched() {
    let _serial = serial();
    let tmp = private_tmp();
    let path = table_path(tmp.path(), &pools(false));
    // Shorter (a truncated table would fault in its users' next region), and longer.
    for len in [8, LEN / 2, LEN + 8] {
        let bytes: Vec<u8> = (0..len).map(|i| (i % 251) as u8 + 1).collect();
        write_file(&path, &bytes, 0o600);
        let e = open_err(tmp.path(), &pools(false));
        assert!(
            e.contains(&format!("is {len} bytes long: must be {LEN} bytes")),
            "{e}"
        );
        assert_eq!(fs::read(&path).unwrap(), bytes, "the file was changed");
    }
}

#[test]
fn a_folder_open_to_others_or_a_link_is_refused() {
    let _serial = serial();
    let tmp = private_tmp();
    let open = tmp.path().join("open");
    fs::create_dir(&open).unwrap();
    for mode in [0o777, 0o755, 0o1777] {
        fs::set_permissions(&open, Permissions::from_mode(mode)).unwrap();
        let e = open_err(&open, &pools(false));
        assert!(e.contains(&format!("has mode {mode:04o}")), "{e}");
        assert_eq!(fs::read_dir(&open).unwrap().count(), 0);
    }
    let link = tmp.path().join("link");
    symlink(tmp.path(), &link).unwrap();
    let e = open_err(&link, &pools(false));
    assert!(e.contains("is a symbolic link"), "{e}");
}

/// For real where this process can make another user's files (as root); the checks over
/// every owner are unit-tested in asat-core (`src/private_file/tests.rs`).
#[test]
fn another_users_folder_or_table_is_refused() {
    let _serial = serial();
    let tmp = private_tmp();
    let path = table_path(tmp.path(), &pools(false));
    write_file(&path, &vec![0; LEN as usize], 0o600);
    match std::os::unix::fs::chown(&path, Some(65534), None) {
        Ok(()) => {
            let e = open_err(tmp.path(), &pools(false));
            assert!(e.contains("is owned by uid 65534, not by you"), "{e}");
            std::os::unix::fs::chown(tmp.path(), Some(65534), None).unwrap();
            let e = open_err(tmp.path(), &pools(false));
            assert!(e.contains("is owned by uid 65534, not by you"), "{e}");
        }
        Err(e) if e.kind() == ErrorKind::PermissionDenied => {
            // Not root: `/` is root's.
            let e = open_err(Path::new("/"), &pools(false));
            assert!(e.contains("is owned by uid 0, not by you"), "{e}");
        }
        Err(e) => panic!("chown: {e}"),
    }
}

#[test]
fn relative_and_empty_folders_are_refused() {
    let _serial = serial();
    for dir in ["", "tables", "./tables"] {
        let e = open_err(Path::new(dir), &pools(false));
        assert!(e.contains("must be an absolute path"), "{dir:?}: {e}");
        let e = child("build", &[(DIR_ENV, Some(OsStr::new(dir)))]);
        assert!(e.starts_with("ERR "), "{dir:?}: {e}");
        assert!(e.contains(&format!("ASAT_POOLS_SHM_DIR={dir:?}")), "{e}");
        assert!(e.contains("must be an absolute path"), "{e}");
    }
    assert!(!Path::new("tables").exists());
}

#[test]
fn the_default_folder_is_xdg_runtime_dir_and_checked() {
    let _serial = serial();
    let xdg = private_tmp();
    let out = child_stdout(
        "build",
        &[("XDG_RUNTIME_DIR", Some(xdg.path().as_os_str()))],
    );
    let table = table_path(xdg.path(), &pools(true));
    assert!(out.contains(&format!("FILE {}", table.display())), "{out}");
    assert!(out.contains("RESULT OK"), "{out}");
    fs::set_permissions(xdg.path(), Permissions::from_mode(0o755)).unwrap();
    let e = child(
        "build",
        &[("XDG_RUNTIME_DIR", Some(xdg.path().as_os_str()))],
    );
    assert!(e.starts_with("ERR ") && e.contains("has mode 0755"), "{e}");
    assert!(
        e.contains("ASAT_POOLS_SHM_DIR can name another folder"),
        "{e}"
    );
    let e = child(
        "build",
        &[("XDG_RUNTIME_DIR", Some(OsStr::new("run/user")))],
    );
    assert!(
        e.starts_with("ERR ") && e.contains("must be an absolute path"),
        "{e}"
    );
}

#[test]
fn all_slots_held_is_a_clear_error_from_build() {
    let _serial = serial();
    let tmp = private_tmp();
    let table = SharedTable::open_in(tmp.path(), &pools(true)).unwrap();
    assert_eq!(table.slot(), 0);
    let holder = OpenOptions::new()
        .read(true)
        .write(true)
        .open(table.path())
        .unwrap();
    assert!(lock_slots(&holder, 1, SLOTS - 1));
    let e = child("build", &[(DIR_ENV, Some(tmp.path().as_os_str()))]);
    assert!(e.starts_with("ERR "), "{e}");
    assert!(
        e.contains(&format!("all {SLOTS} slots are held by live processes")),
        "{e}"
    );
    drop(holder);
    assert_eq!(
        child("build", &[(DIR_ENV, Some(tmp.path().as_os_str()))]),
        "OK"
    );
}

/// Whatever the user's processes wrote into the table (a faulty one, a bug), readers neither
/// overflow nor panic, loads stay in range, dead or bogus tags are reclaimed, and jobs still
/// place their threads.
#[test]
fn hostile_contents_are_harmless() {
    let _serial = serial();
    let tmp = private_tmp();
    let table = SharedTable::open_in(tmp.path(), &pools(true)).unwrap();
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(table.path())
        .unwrap();
    let slot = |s: usize| 8 + s * 3;
    put(&file, 3, u64::MAX); // the generation counter, about to wrap
    put(&file, 4, u64::MAX); // the high-water mark, past the slots
                             // Bogus tags that no live process holds: a made-up pid, RECLAIMING, a tag in a slot
                             // beyond any high-water mark, with huge loads.
    for (s, tag) in [
        (1, 0xdead_beef_0000_0001),
        (2, u64::MAX),
        (7, 1 << 32),
        (255, 3),
    ] {
        put(&file, slot(s), tag);
        put(&file, slot(s) + 1, u64::MAX);
        put(&file, slot(s) + 2, 1 << 40);
    }
    // Two "live" slots (their locks held here) with loads that overflow any sum: huge
    // positive in pool 0, huge negative (as signed) in pool 1.
    let live = OpenOptions::new()
        .read(true)
        .write(true)
        .open(table.path())
        .unwrap();
    assert!(lock_slots(&live, 5, 2));
    for s in [5, 6] {
        put(&file, slot(s), 0x1234_5678_9abc_def0);
        put(&file, slot(s) + 1, i64::MAX as u64);
        put(&file, slot(s) + 2, 1 << 63);
    }
    assert_eq!(table.reclaim_dead(), 4);
    assert_eq!(table.loads(), vec![u32::MAX, 0]);
    // (A sum that reads as negative is 0: the bogus slot hides real load, no more.)
    table.add(1, 2);
    assert_eq!(table.loads(), vec![u32::MAX, 0]);
    assert_eq!(table.own_loads(), vec![0, 2]);
    table.sub(1, 2);

    // A job avoids the "full" pool; its threads land in the other one.
    let policy = Arc::new(
        PoolPolicy::builder(pools(true))
            .table(table.clone())
            .pin(false)
            .build()
            .unwrap(),
    );
    assert_eq!(policy.home(), 1);
    let rt = Runtime::builder()
        .max_threads(2)
        .shared_policy(policy.clone())
        .build()
        .unwrap();
    rt.region(|_| {});
    let last = policy.last_region().unwrap();
    assert!((1..=2).contains(&last.threads), "{last:?}");
    assert!(last.per_pool.iter().all(|&(p, _)| p == 1), "{last:?}");
    drop((rt, policy));
    assert_eq!(table.own_loads(), vec![0, 0]);
    // Another process opens and uses the table (the generation wraps) without trouble.
    assert_eq!(
        child("build", &[(DIR_ENV, Some(tmp.path().as_os_str()))]),
        "OK"
    );
    drop(live);
    assert_eq!(table.reclaim_dead(), 2);
    assert_eq!(table.loads(), vec![0, 0]);
}

/// This machine's topology exported as XML and read back has the real pools' CPU sets (and
/// fingerprint, with the whole machine usable), and a synthetic one may too: their jobs must
/// never count in the real machine's table.
#[test]
fn a_model_machine_never_uses_the_machine_wide_table() {
    let _serial = serial();
    let tmp = private_tmp();
    let xml_dir = tempfile::tempdir().unwrap();
    let xml = xml_dir.path().join("machine.xml");
    let topo = Topology::detect().unwrap();
    assert!(topo.is_detected());
    topo.hwloc()
        .export_xml_file(Some(&xml), Default::default())
        .expect("export xml");
    let real = topo.pools(PoolKind::Numa).unwrap();
    let out = child_stdout(
        "model",
        &[
            (DIR_ENV, Some(tmp.path().as_os_str())),
            (XML_ENV, Some(xml.as_os_str())),
        ],
    );
    assert!(out.contains("RESULT OK"), "{out}");
    let files: Vec<PathBuf> = out
        .lines()
        .filter_map(|l| l.split_once("FILE ").map(|(_, f)| PathBuf::from(f)))
        .collect();
    assert_eq!(files, vec![table_path(tmp.path(), &real)]);
}
