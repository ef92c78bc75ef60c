//! Work spread over the machine's cores: a map whose results come back in the items' order, so that callers decide exactly as one after the other would.

/// `f` of every item, in the items' order, computed on as many threads as the
/// machine has cores (at most one per item), each thread with its own scratch
/// `S` (made by `Default`, kept from item to item). Items are taken one at a
/// time off a shared counter: their work may differ in length. A worker's
/// panic resumes in the caller.
pub fn map_in_order<T: Sync, R: Send, S: Default>(items: &[T], f: impl Fn(&mut S, &T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(items.len());
    if threads <= 1 {
        let mut scratch = S::default();
        return items.iter().map(|t| f(&mut scratch, t)).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let (f, next) = (&f, &next);
    let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(move || {
                    let mut scratch = S::default();
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(t) = items.get(i) else { break };
                        out.push((i, f(&mut scratch, t)));
                    }
                    out
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))).collect()
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_the_items_order_and_each_thread_its_scratch() {
        let items: Vec<usize> = (0..257).collect();
        let out = map_in_order(&items, |seen: &mut Vec<usize>, &i| {
            // Uneven work, so that threads finish out of order.
            std::hint::black_box((0..(i % 7) * 1000).fold(0usize, |a, k| a ^ k));
            seen.push(i);
            // A thread's scratch holds only the items it took, in increasing order.
            assert!(seen.windows(2).all(|w| w[0] < w[1]));
            i
        });
        assert_eq!(out, items);
        assert!(map_in_order(&Vec::<usize>::new(), |_: &mut (), &i| i).is_empty());
    }

    #[test]
    fn a_workers_panic_reaches_the_caller() {
        let items: Vec<usize> = (0..8).collect();
        let caught = std::panic::catch_unwind(|| map_in_order(&items, |_: &mut (), &i| if i == 5 { panic!("item five") } else { i }));
        assert!(caught.is_err());
    }
}
