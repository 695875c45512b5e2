// The one place the core targets (PropertyList, KeyedArchive, ResumeData, ResumeDataBatch,
// OutputFiles) choose their Foundation and their C library. Each of their files imports this
// module instead of Foundation, so the choice is made here once for every platform.
//
// FoundationEssentials (swift-foundation's core: Data, Date, URL, FileManager, ProcessInfo,
// JSONEncoder) exists as a module of its own in the toolchains for Linux, Windows and Android. A
// program that imports it alone does not link Foundation, FoundationInternationalization or their
// ICU (about 40 MiB on Linux). Apple's SDKs have no such module: there the same types come from
// Foundation, which the system already holds.
#if canImport(FoundationEssentials)
  @_exported public import FoundationEssentials
#else
  @_exported public import Foundation
#endif

// Foundation re-exports the C library; FoundationEssentials does not.
#if canImport(Glibc)
  @_exported public import Glibc
#elseif canImport(Musl)
  @_exported public import Musl
#elseif canImport(Android)
  @_exported public import Android
#elseif canImport(Darwin)
  @_exported public import Darwin
#endif
