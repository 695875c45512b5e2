/// "Did you mean …?" for a mistyped subcommand, option or action.
enum Suggestions {
  /// The candidates closest to `word`: those a unique prefix of (`insp` → `inspect`), else those
  /// at the smallest edit distance (insertions, deletions, substitutions and swaps of neighbours)
  /// when it is at most 2 and less than half the candidate's length (so that `-x` does not
  /// suggest `-o`). Empty when none is close.
  static func closest(to word: String, in candidates: [String]) -> [String] {
    let bare = stripDashes(word)
    guard !bare.isEmpty else { return [] }
    let prefixed = candidates.filter { $0.hasPrefix(word) && $0 != word }
    // A prefix shared by several candidates says nothing about which one was meant.
    if prefixed.count == 1 { return prefixed }
    var best: [String] = []
    var bestDistance = Int.max
    for candidate in candidates where candidate != word {
      let distance = editDistance(bare, stripDashes(candidate))
      guard distance <= 2, distance * 2 < stripDashes(candidate).count else { continue }
      if distance < bestDistance {
        best = [candidate]
        bestDistance = distance
      } else if distance == bestDistance, !best.contains(candidate) {
        best.append(candidate)
      }
    }
    return best
  }

  /// `; did you mean 'X'?` (or `'X' or 'Y'`) for the closest candidates, or empty.
  static func hint(for word: String, in candidates: [String]) -> String {
    let closest = closest(to: word, in: candidates)
    guard !closest.isEmpty else { return "" }
    return "; did you mean " + closest.map { "'\($0)'" }.joined(separator: " or ") + "?"
  }

  /// The optimal-string-alignment distance (Damerau–Levenshtein where no substring is edited
  /// twice), over Unicode scalars.
  static func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a.unicodeScalars)
    let b = Array(b.unicodeScalars)
    guard !a.isEmpty else { return b.count }
    guard !b.isEmpty else { return a.count }
    // Three rows suffice: a swap looks two rows back.
    var previous2 = [Int](repeating: 0, count: b.count + 1)
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
      current[0] = i
      for j in 1...b.count {
        let cost = a[i - 1] == b[j - 1] ? 0 : 1
        current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
        if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
          current[j] = min(current[j], previous2[j - 2] + 1)
        }
      }
      (previous2, previous, current) = (previous, current, previous2)
    }
    return previous[b.count]
  }

  private static func stripDashes(_ word: String) -> String {
    String(word.drop { $0 == "-" })
  }
}
