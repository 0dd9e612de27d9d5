//! Helpers shared by the integration tests.
#![allow(dead_code)]

use asat::{Plan, Policy, RegionStart};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A policy that cycles through a script of team sizes, region after region.
#[derive(Debug)]
pub struct Scripted {
    sizes: Vec<usize>,
    next: AtomicUsize,
}

impl Scripted {
    pub fn new(sizes: Vec<usize>) -> Self {
        assert!(!sizes.is_empty());
        Self {
            sizes,
            next: AtomicUsize::new(0),
        }
    }
}

impl Policy for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }
    fn plan(&self, _start: &RegionStart) -> Plan {
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        Plan::run(self.sizes[i % self.sizes.len()])
    }
}
