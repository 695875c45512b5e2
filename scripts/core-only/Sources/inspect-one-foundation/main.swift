// inspect-one with the whole of Foundation linked in, as every target of the core linked it before
// the core moved to FoundationEssentials.
import Foundation
import InspectOne

// A use of Foundation proper (not FoundationEssentials), so that it is linked and loaded.
let started = Date()
let status = inspectOne(CommandLine.arguments)
if ProcessInfo.processInfo.environment["INSPECT_ONE_TIME"] != nil {
  print(DateFormatter.localizedString(from: started, dateStyle: .none, timeStyle: .medium))
}
exit(status)
