//! Work spread over the machine's cores: a map whose results come back in the items' order, so that callers decide exactly as one after the other would.

use rayon::prelude::*;

/// `f` of every item, in the items' order, computed on rayon's pool (as many
/// threads as the machine has cores), each run of items a thread takes with
/// its own scratch `S` (made by `Default`, kept from item to item of the run).
/// Idle threads steal work, also from maps nested inside `f` (a fit's edge
/// searches inside a batch of fits): their work may differ in length. A
/// worker's panic resumes in the caller.
pub fn map_in_order<T: Sync, R: Send, S: Default>(items: &[T], f: impl Fn(&mut S, &T) -> R + Sync) -> Vec<R> {
    items.par_iter().map_init(S::default, |scratch, t| f(scratch, t)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_the_items_order_and_each_run_its_scratch() {
        let items: Vec<usize> = (0..257).collect();
        let out = map_in_order(&items, |seen: &mut Vec<usize>, &i| {
            // Uneven work, so that threads finish out of order.
            std::hint::black_box((0..(i % 7) * 1000).fold(0usize, |a, k| a ^ k));
            seen.push(i);
            // A scratch holds only the items of the run it was made for, in increasing order.
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
