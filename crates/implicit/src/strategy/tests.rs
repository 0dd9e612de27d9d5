use super::*;

fn cfg() -> Config {
    Config::builder()
        .context_switch(Duration::from_micros(30))
        .release_latency(Duration::from_micros(1))
        .sample(20)
        .build()
        .unwrap()
}

fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

#[test]
fn fixed_and_trivial_strategies() {
    let c = cfg();
    assert_eq!(Block.barrier_spin(), Duration::ZERO);
    assert_eq!(Spin.barrier_spin(), Duration::MAX);
    let f = FixedSpin::with_config(&c);
    assert_eq!(f.barrier_spin(), us(60));
    assert_eq!(f.read_spin(), us(60));
    let o = Oracle::with_config(us(100), &c);
    assert_eq!(o.barrier_spin(), us(101));
    assert_eq!(o.read_spin(), us(60));
    assert_eq!(Oracle::with_config(us(301), &c).barrier_spin(), us(60));
}

#[test]
fn global_learns_from_imbalances_and_drops_outliers() {
    let g = AdaptiveGlobal::with_config(&cfg());
    assert_eq!(g.barrier_spin(), us(60));
    assert_eq!(g.imbalance_estimate(), None);
    for _ in 0..18 {
        g.record_imbalance(us(150));
    }
    g.record_imbalance(Duration::from_millis(40));
    g.record_imbalance(Duration::from_millis(40));
    assert_eq!(g.imbalance_estimate(), Some(us(150)));
    assert_eq!(g.barrier_spin(), us(151));
    // the imbalance grows past V = 300 µs: spin only S
    for _ in 0..200 {
        g.record_imbalance(us(900));
    }
    assert_eq!(g.barrier_spin(), us(60));
}

#[test]
fn local_learns_per_thread() {
    let l = std::sync::Arc::new(AdaptiveLocal::with_config(&cfg()));
    for _ in 0..10 {
        l.record_wait(us(200), false);
    }
    assert_eq!(l.barrier_spin(), us(201));
    // another thread has its own estimate
    let l2 = std::sync::Arc::clone(&l);
    let other = std::thread::spawn(move || l2.barrier_spin())
        .join()
        .unwrap();
    assert_eq!(other, us(60));
    assert_eq!(l.imbalance_estimate(), Some(us(200)));
}

#[test]
fn by_name_errors_name_the_choices() {
    let c = cfg();
    let e = AnyStrategy::by_name("gang", &c).unwrap_err();
    assert_eq!(
        e.to_string(),
        "unknown wait strategy \"gang\": must be one of block, spin, fixed, fixed:<us>, oracle:<us>, local, global"
    );
    assert!(AnyStrategy::by_name("oracle:abc", &c).is_err());
    assert_eq!(
        AnyStrategy::by_name("fixed:15", &c).unwrap().barrier_spin(),
        us(15)
    );
    assert_eq!(
        AnyStrategy::by_name(" Oracle:100 ", &c)
            .unwrap()
            .barrier_spin(),
        us(101)
    );
}

#[test]
fn config_errors() {
    let e = Config::builder()
        .context_switch(Duration::ZERO)
        .build()
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "context-switch cost 0ns: must be greater than 0 and at most 100 ms"
    );
    assert!(Config::builder().sample(5000).build().is_err());
    assert!(Config::builder()
        .context_switch(us(10))
        .release_latency(Duration::from_secs(1))
        .build()
        .is_err());
}
