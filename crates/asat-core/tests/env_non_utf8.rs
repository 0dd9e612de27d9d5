//! An `ASAT_*` environment variable whose value is not UTF-8 is a clear error, not a value
//! taken for unset. (Its own file: it changes the process environment.)

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use asat_core::Runtime;

#[test]
fn a_value_that_is_not_utf8_is_an_error() {
    let bad = OsStr::from_bytes(b"4\xff");
    for var in ["ASAT_MAX_THREADS", "ASAT_POLICY"] {
        // This binary's only test: no other thread reads the environment meanwhile.
        std::env::set_var(var, bad);
        let err = Runtime::builder().build().unwrap_err().to_string();
        assert!(err.contains(var), "{var}: {err}");
        std::env::remove_var(var);
    }
}
