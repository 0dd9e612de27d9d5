//! Co-located load for benches and examples: single-threaded CPU hog processes that run until
//! dropped.

use std::io;
use std::process::{Child, Command, Stdio};

/// `n` CPU hog processes (`sh -c 'while :; do :; done'`), killed and reaped on drop.
#[derive(Debug)]
pub struct CpuHogs {
    children: Vec<Child>,
}

impl CpuHogs {
    /// Starts `n` hogs (none for `n = 0`).
    pub fn spawn(n: usize) -> io::Result<Self> {
        let mut hogs = CpuHogs {
            children: Vec::with_capacity(n),
        };
        for _ in 0..n {
            hogs.children.push(
                Command::new("sh")
                    .args(["-c", "while :; do :; done"])
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .spawn()?,
            );
        }
        Ok(hogs)
    }

    /// How many hogs run.
    pub fn len(&self) -> usize {
        self.children.len()
    }

    /// Whether no hog runs.
    pub fn is_empty(&self) -> bool {
        self.children.is_empty()
    }
}

impl Drop for CpuHogs {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hogs_run_until_dropped() {
        let mut hogs = CpuHogs::spawn(2).unwrap();
        assert_eq!(hogs.len(), 2);
        for c in &mut hogs.children {
            assert!(c.try_wait().unwrap().is_none(), "a hog exited early");
        }
        let pids: Vec<u32> = hogs.children.iter().map(Child::id).collect();
        drop(hogs);
        for pid in pids {
            // Killed and reaped: no zombie left behind.
            assert!(
                !std::path::Path::new(&format!("/proc/{pid}")).exists(),
                "hog {pid} still exists"
            );
        }
    }
}
