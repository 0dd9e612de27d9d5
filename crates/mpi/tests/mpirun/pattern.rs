//! Random exchange patterns that every rank (and the driver) derives from the same seed, so
//! that each knows what it must send and receive without telling the others.

/// A message of one round.
#[derive(Clone, Copy, Debug)]
pub struct Msg {
    pub src: usize,
    pub dst: usize,
    /// Its tag: the message's number among those from `src` to `dst` this round.
    pub tag: i32,
    /// Its length in `u64` words.
    pub len: usize,
}

/// Words of a large message: 64 KiB, above Open MPI's eager limits, so that it goes by
/// rendezvous and needs both sides to make progress.
pub const LARGE: usize = 8192;

/// splitmix64.
pub fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn key(parts: &[u64]) -> u64 {
    parts.iter().fold(0x5eed, |h, &p| mix(h ^ p))
}

/// Every message of round `round` among `np` ranks: 0 to 2 from each rank to each rank
/// (itself included), of 0 to 15 words, one in eight large.
pub fn round(seed: u64, round: u64, np: usize) -> Vec<Msg> {
    let mut out = Vec::new();
    for src in 0..np {
        for dst in 0..np {
            let r = key(&[seed, round, src as u64, dst as u64]);
            let count = [0, 0, 1, 2][(r % 4) as usize];
            for tag in 0..count {
                let r = key(&[seed, round, src as u64, dst as u64, tag as u64, 1]);
                let len = if r % 8 == 0 {
                    LARGE
                } else {
                    (r >> 8) as usize % 16
                };
                out.push(Msg { src, dst, tag, len });
            }
        }
    }
    out
}

/// Word `j` of a message.
pub fn word(seed: u64, round: u64, m: &Msg, j: usize) -> u64 {
    key(&[
        seed,
        round,
        m.src as u64,
        m.dst as u64,
        m.tag as u64,
        j as u64,
        2,
    ])
}

/// How long `rank` computes before the round's barrier, in microseconds (0 to 400): the
/// imbalance the waits see.
pub fn work_us(seed: u64, round: u64, rank: usize) -> u64 {
    key(&[seed, round, rank as u64, 3]) % 401
}

/// What `rank` contributes to the round's all-reduce: 4 words below 2^32, so that their sum
/// over any number of ranks the tests run cannot overflow.
pub fn contribution(seed: u64, round: u64, rank: usize) -> [u64; 4] {
    std::array::from_fn(|j| key(&[seed, round, rank as u64, j as u64, 4]) >> 32)
}

/// The round's all-reduce over `np` ranks: a sum in even rounds, a maximum in odd ones.
pub fn reduced(seed: u64, round: u64, np: usize) -> [u64; 4] {
    let parts = (0..np).map(|r| contribution(seed, round, r));
    if round % 2 == 0 {
        parts.fold([0; 4], |acc, c| std::array::from_fn(|j| acc[j] + c[j]))
    } else {
        parts.fold([0; 4], |acc, c| std::array::from_fn(|j| acc[j].max(c[j])))
    }
}
