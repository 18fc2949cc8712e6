//! What a warp's accesses and barriers tell the sanitizer (`crate::sanitizer`), where a launch
//! asks for it: the bytes of shared and local memory each active lane touched, and the lanes
//! that reach a barrier or name a warp-synchronous mask. Only called with the sanitizer on, so a
//! run without it does no more work than a test of an `Option`.

use super::lanes::Lanes;
use super::launch::Storage;
use super::machine::Machine;
use crate::kernel::memory::{pointer_address, pointer_object};
use crate::kernel::span::Span;
use crate::sanitizer::Touch;

impl Machine<'_, '_> {
    /// Hands the sanitizer the shared and local bytes of one access, made by the lanes `mask`
    /// at `ptrs` (each in bounds: the access succeeded), `width` bytes each.
    pub(super) fn sanitize_access(
        &mut self,
        ptrs: &Lanes,
        mask: u32,
        width: u32,
        touch: Touch,
        span: Span,
    ) {
        let mut shared = [None; 32];
        let mut local = [None; 32];
        let (mut any_shared, mut any_local) = (false, false);
        for (lane, &p) in ptrs.iter().enumerate() {
            if mask >> lane & 1 == 0 {
                continue;
            }
            let Some(object) = pointer_object(p).and_then(|id| self.objects.get(id)) else {
                continue;
            };
            match object.storage {
                Storage::Shared => {
                    shared[lane] = Some(pointer_address(p) as u64);
                    any_shared = true;
                }
                Storage::Local => {
                    // Local memory interleaves a thread's words with the block's other
                    // threads' (`local_physical`).
                    let logical = pointer_address(p) as u64;
                    local[lane] = Some(self.local_physical(logical, self.lane_tid[lane]));
                    any_local = true;
                }
                Storage::Global(_) => {}
            }
        }
        let Some(sanitizer) = self.sanitizer.as_deref_mut() else {
            return;
        };
        if any_shared {
            sanitizer.shared_access(self.warp, touch, &shared, width, span);
        }
        if any_local {
            // An access wider than a word spans several interleaved words: each is handed on
            // its own, at its physical place.
            let mut at = 0;
            while at < width {
                let step = (width - at).min(4);
                let mut part = [None; 32];
                for (lane, base) in local.iter().enumerate() {
                    if let Some(base) = base {
                        part[lane] = Some(base + u64::from(at / 4) * u64::from(self.threads) * 4);
                    }
                }
                sanitizer.local_access(self.warp, touch, &part, step, span);
                at += step;
            }
        }
    }
}
