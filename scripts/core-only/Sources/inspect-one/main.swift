import InspectOne

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

exit(inspectOne(CommandLine.arguments))
