;; The common case of inspect.ts's `inspectJson` in WebAssembly: one pass over a small body that JavaScript would
;; touch byte by byte (about sixteen instructions a byte under V8) and this module skips sixteen bytes of string at a
;; time. Its verdict says whether the body keeps the rules (nesting depth, single top-level keys), and whether it is
;; all ASCII (so already valid UTF-8). Anything rarer (a number with an exponent or over 24 characters, a top-level
;; name with an escape, a single key past the 31st) is left to `inspectJson` itself: the verdict is then "decide".
;;
;; Built into inspect-wasm-bytes.ts by `node scripts/build-wasm.mjs`; a test checks that the two agree.
;;
;; Memory: page 0 holds the body (at most 64 KiB), page 1 the tables of single keys. A table is a count byte, then
;; per key its length byte and its UTF-8 bytes, in the order of the key set (a key's index is its bit).
;;
;; Verdict: bits 0-1 are the kind (0 kept, 1 too deep, 2 a single key repeated, 3 decide in JavaScript), bit 2 is
;; set when the whole body was read and is ASCII, bits 3 and up are the byte offset (too deep) or the key's index.
(module
  (memory (export "memory") 2)

  ;; The index of the table's key equal to the `len` bytes at `s`, or -1.
  (func $keyIndex (param $s i32) (param $len i32) (param $table i32) (result i32)
    (local $count i32) (local $j i32) (local $klen i32) (local $p i32) (local $q i32)
    (local.set $count (i32.load8_u (local.get $table)))
    (local.set $p (i32.add (local.get $table) (i32.const 1)))
    (block $none
      (loop $entries
        (br_if $none (i32.ge_u (local.get $j) (local.get $count)))
        (local.set $klen (i32.load8_u (local.get $p)))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (if (i32.eq (local.get $klen) (local.get $len))
          (then
            (local.set $q (i32.const 0))
            (block $differ
              (loop $bytes
                (if (i32.ge_u (local.get $q) (local.get $len)) (then (return (local.get $j))))
                (br_if $differ (i32.ne (i32.load8_u (i32.add (local.get $p) (local.get $q)))
                                       (i32.load8_u (i32.add (local.get $s) (local.get $q)))))
                (local.set $q (i32.add (local.get $q) (i32.const 1)))
                (br $bytes)))))
        (local.set $p (i32.add (local.get $p) (local.get $klen)))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $entries)))
    (i32.const -1))

  ;; The verdict on the `n` bytes at offset 0, against `maxDepth` and the table of single keys at `table`.
  (func (export "inspect") (param $n i32) (param $maxDepth i32) (param $table i32) (result i32)
    (local $i i32) (local $c i32) (local $depth i32) (local $memberKey i32) (local $seen i32) (local $high i32)
    (local $k i32) (local $d i32) (local $escaped i32) (local $start i32) (local $index i32) (local $exponent i32)
    (local $block v128) (local $stops i32)
    (block $done
      (loop $scan
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $c (i32.load8_u (local.get $i)))
        (local.set $high (i32.or (local.get $high) (local.get $c)))
        ;; A string: found its closing quote as inspectJson's closingQuote does (a backslash escapes the next byte).
        (if (i32.eq (local.get $c) (i32.const 0x22))
          (then
            (local.set $k (i32.add (local.get $i) (i32.const 1)))
            (local.set $escaped (i32.const 0))
            (block $closed
              (loop $string
                ;; Sixteen bytes at a time up to the next quote or backslash, noting any byte past ASCII on the way.
                (block $stop
                  (loop $wide
                    (br_if $stop (i32.gt_u (i32.add (local.get $k) (i32.const 16)) (local.get $n)))
                    (local.set $block (v128.load (local.get $k)))
                    (local.set $high (i32.or (local.get $high) (i32.shl (i32.ne (i8x16.bitmask (local.get $block)) (i32.const 0)) (i32.const 7))))
                    (local.set $stops (i8x16.bitmask (v128.or
                      (i8x16.eq (local.get $block) (i8x16.splat (i32.const 0x22)))
                      (i8x16.eq (local.get $block) (i8x16.splat (i32.const 0x5c))))))
                    (if (local.get $stops)
                      (then
                        (local.set $k (i32.add (local.get $k) (i32.ctz (local.get $stops))))
                        (br $stop)))
                    (local.set $k (i32.add (local.get $k) (i32.const 16)))
                    (br $wide)))
                (if (i32.ge_u (local.get $k) (local.get $n)) (then (return (i32.const 3))))
                (local.set $d (i32.load8_u (local.get $k)))
                (local.set $high (i32.or (local.get $high) (local.get $d)))
                (br_if $closed (i32.eq (local.get $d) (i32.const 0x22)))
                (if (i32.eq (local.get $d) (i32.const 0x5c))
                  (then
                    (local.set $escaped (i32.const 1))
                    (local.set $k (i32.add (local.get $k) (i32.const 2))))
                  (else (local.set $k (i32.add (local.get $k) (i32.const 1)))))
                (br $string)))
            ;; A member name of the top-level object: a single key may appear once.
            (if (local.get $memberKey)
              (then
                (if (local.get $escaped) (then (return (i32.const 3))))
                (local.set $index (call $keyIndex
                  (i32.add (local.get $i) (i32.const 1))
                  (i32.sub (i32.sub (local.get $k) (local.get $i)) (i32.const 1))
                  (local.get $table)))
                (if (i32.ge_s (local.get $index) (i32.const 0))
                  (then
                    (if (i32.ge_u (local.get $index) (i32.const 31)) (then (return (i32.const 3))))
                    (if (i32.and (local.get $seen) (i32.shl (i32.const 1) (local.get $index)))
                      (then (return (i32.or (i32.shl (local.get $index) (i32.const 3)) (i32.const 2)))))
                    (local.set $seen (i32.or (local.get $seen) (i32.shl (i32.const 1) (local.get $index))))))))
            (local.set $memberKey (i32.const 0))
            (local.set $i (i32.add (local.get $k) (i32.const 1)))
            (br $scan)))
        (if (i32.or (i32.eq (local.get $c) (i32.const 0x7b)) (i32.eq (local.get $c) (i32.const 0x5b)))
          (then
            (local.set $depth (i32.add (local.get $depth) (i32.const 1)))
            (if (i32.gt_u (local.get $depth) (local.get $maxDepth))
              (then (return (i32.or (i32.shl (local.get $i) (i32.const 3)) (i32.const 1)))))
            (local.set $memberKey (i32.and (i32.eq (local.get $depth) (i32.const 1)) (i32.eq (local.get $c) (i32.const 0x7b))))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $scan)))
        (if (i32.or (i32.eq (local.get $c) (i32.const 0x7d)) (i32.eq (local.get $c) (i32.const 0x5d)))
          (then
            (local.set $depth (i32.sub (local.get $depth) (i32.const 1)))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $scan)))
        ;; Members of the top-level object are separated by commas at depth 1.
        (if (i32.eq (local.get $c) (i32.const 0x2c))
          (then
            (local.set $memberKey (i32.eq (local.get $depth) (i32.const 1)))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $scan)))
        ;; A number: one that could overflow a double (an exponent, or long) is read exactly in JavaScript.
        (if (i32.or (i32.eq (local.get $c) (i32.const 0x2d)) (i32.lt_u (i32.sub (local.get $c) (i32.const 0x30)) (i32.const 10)))
          (then
            (local.set $start (local.get $i))
            (local.set $exponent (i32.const 0))
            (block $end
              (loop $number
                (br_if $end (i32.ge_u (local.get $i) (local.get $n)))
                (local.set $d (i32.load8_u (local.get $i)))
                (if (i32.eq (i32.or (local.get $d) (i32.const 0x20)) (i32.const 0x65))
                  (then (local.set $exponent (i32.const 1)))
                  (else
                    (br_if $end (i32.eqz (i32.or
                      (i32.or (i32.eq (local.get $d) (i32.const 0x2b)) (i32.eq (local.get $d) (i32.const 0x2d)))
                      (i32.or (i32.eq (local.get $d) (i32.const 0x2e)) (i32.lt_u (i32.sub (local.get $d) (i32.const 0x30)) (i32.const 10))))))))
                (local.set $i (i32.add (local.get $i) (i32.const 1)))
                (br $number)))
            (if (i32.or (local.get $exponent) (i32.gt_u (i32.sub (local.get $i) (local.get $start)) (i32.const 24)))
              (then (return (i32.const 3))))
            (br $scan)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $scan)))
    ;; Read to the end and kept: bit 2 says whether every byte was ASCII.
    (i32.shl (i32.eqz (i32.and (local.get $high) (i32.const 0x80))) (i32.const 2))))
