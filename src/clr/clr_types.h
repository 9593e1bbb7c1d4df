/*
 * clr_types: our own C declarations of the types and constants of the CLR
 * profiling API, as the runtime's PAL lays them out on Linux x64: the ABI
 * types (HRESULT, DWORD, WCHAR, GUID ...), the enums, structs and callback
 * types of corprof.idl, the metadata types IMetaDataImport needs (cor.h,
 * corhdr.h) and the HRESULTs the profiler sees (winerror.h, corerror.h).
 * These are facts (names, values, layouts) transcribed from the public
 * dotnet/runtime sources, not copied code.
 *
 * ABI notes: the SysV calling convention throughout (no stdcall), WCHAR is a
 * UTF-16 code unit (not wchar_t), LONG/ULONG are 32 bits, every *ID is
 * pointer sized, and every enum passed to or from the runtime is 4 bytes
 * (asserted below).  Flag sets whose values do not fit an int (the event
 * masks) are uint32_t with #defined values, since ISO C limits enumerators
 * to the range of int.
 */
#ifndef CORSCOPE_CLR_TYPES_H
#define CORSCOPE_CLR_TYPES_H

#include <stddef.h>
#include <stdint.h>

#define CLR_HIDDEN __attribute__((visibility("hidden")))

/* Empty: COM methods and profiler hooks use the platform's C convention. */
#define STDMETHODCALLTYPE

/* ------------------------------------------------------------------------
 * PAL ABI types (pal_mstypes.h on a 64-bit Linux host)
 * ------------------------------------------------------------------------ */

typedef int32_t HRESULT;
typedef uint32_t ULONG;
typedef uint32_t ULONG32;
typedef uint32_t DWORD;
typedef uint32_t UINT;
typedef uint32_t UINT32;
typedef int32_t LONG;
typedef int32_t LONG32;
typedef int32_t BOOL;
typedef uint16_t USHORT;
typedef uint8_t BYTE;
typedef uint8_t UINT8;
typedef uint16_t WCHAR; /* UTF-16 code unit */
typedef WCHAR *LPWSTR;
typedef const WCHAR *LPCWSTR;
typedef uintptr_t UINT_PTR;
typedef uintptr_t ULONG_PTR;
typedef size_t SIZE_T;
typedef uint64_t ULONG64;
typedef uint64_t UINT64;
typedef int64_t LONGLONG;
typedef void *PVOID;
typedef const void *LPCVOID;
typedef void *HANDLE;
typedef const BYTE *LPCBYTE;
typedef BYTE *LPBYTE;

#ifndef TRUE
#define TRUE 1
#endif
#ifndef FALSE
#define FALSE 0
#endif

typedef struct GUID {
    uint32_t Data1;
    uint16_t Data2;
    uint16_t Data3;
    uint8_t Data4[8];
} GUID;
typedef GUID IID;
typedef GUID CLSID;
typedef const GUID *REFGUID;
typedef const GUID *REFIID;
typedef const GUID *REFCLSID;
typedef const GUID *LPCGUID;

/* ------------------------------------------------------------------------
 * HRESULTs
 * ------------------------------------------------------------------------ */

#ifndef SUCCEEDED
#define SUCCEEDED(hr) ((HRESULT)(hr) >= 0)
#endif
#ifndef FAILED
#define FAILED(hr) ((HRESULT)(hr) < 0)
#endif

#define S_OK ((HRESULT)0x00000000u)
#define S_FALSE ((HRESULT)0x00000001u)
#define E_NOTIMPL ((HRESULT)0x80004001u)
#define E_NOINTERFACE ((HRESULT)0x80004002u)
#define E_POINTER ((HRESULT)0x80004003u)
#define E_ABORT ((HRESULT)0x80004004u)
#define E_FAIL ((HRESULT)0x80004005u)
#define E_UNEXPECTED ((HRESULT)0x8000FFFFu)
#define E_ACCESSDENIED ((HRESULT)0x80070005u)
#define E_OUTOFMEMORY ((HRESULT)0x8007000Eu)
#define E_INVALIDARG ((HRESULT)0x80070057u)
#define CLASS_E_NOAGGREGATION ((HRESULT)0x80040110u)
#define CLASS_E_CLASSNOTAVAILABLE ((HRESULT)0x80040111u)

/* Profiling API errors: FACILITY_URT (0x13) errors, 0x8013xxxx. */
#define CORPROF_E_FUNCTION_NOT_COMPILED ((HRESULT)0x80131350u)
#define CORPROF_E_DATAINCOMPLETE ((HRESULT)0x80131351u)
#define CORPROF_E_FUNCTION_NOT_IL ((HRESULT)0x80131354u)
#define CORPROF_E_NOT_MANAGED_THREAD ((HRESULT)0x80131355u)
#define CORPROF_E_CALL_ONLY_FROM_INIT ((HRESULT)0x80131356u)
#define CORPROF_E_NOT_YET_AVAILABLE ((HRESULT)0x8013135Bu)
#define CORPROF_E_TYPE_IS_PARAMETERIZED ((HRESULT)0x8013135Cu)
#define CORPROF_E_FUNCTION_IS_PARAMETERIZED ((HRESULT)0x8013135Du)
#define CORPROF_E_STACKSNAPSHOT_INVALID_TGT_THREAD ((HRESULT)0x8013135Eu)
#define CORPROF_E_STACKSNAPSHOT_UNMANAGED_CTX ((HRESULT)0x8013135Fu)
#define CORPROF_E_STACKSNAPSHOT_UNSAFE ((HRESULT)0x80131360u)
#define CORPROF_E_STACKSNAPSHOT_ABORTED ((HRESULT)0x80131361u)
#define CORPROF_E_LITERALS_HAVE_NO_ADDRESS ((HRESULT)0x80131362u)
#define CORPROF_E_UNSUPPORTED_CALL_SEQUENCE ((HRESULT)0x80131363u)
#define CORPROF_E_ASYNCHRONOUS_UNSAFE ((HRESULT)0x80131364u)
#define CORPROF_E_CLASSID_IS_ARRAY ((HRESULT)0x80131365u)
#define CORPROF_E_CLASSID_IS_COMPOSITE ((HRESULT)0x80131366u)
#define CORPROF_E_PROFILER_DETACHING ((HRESULT)0x80131367u)
#define CORPROF_E_PROFILER_NOT_ATTACHABLE ((HRESULT)0x80131368u)
#define CORPROF_E_UNRECOGNIZED_PIPE_MSG_FORMAT ((HRESULT)0x80131369u)
#define CORPROF_E_PROFILER_ALREADY_ACTIVE ((HRESULT)0x8013136Au)
#define CORPROF_E_PROFILEE_INCOMPATIBLE_WITH_TRIGGER ((HRESULT)0x8013136Bu)
#define CORPROF_E_IPC_FAILED ((HRESULT)0x8013136Cu)
/* corerror spells it CORPROF_E_IPC_FAILED; this alias keeps the other
 * spelling working. */
#define CORPROF_E_IPCFAILURE CORPROF_E_IPC_FAILED
#define CORPROF_E_PROFILEE_PROCESS_NOT_FOUND ((HRESULT)0x8013136Du)
#define CORPROF_E_CALLBACK3_REQUIRED ((HRESULT)0x8013136Eu)
#define CORPROF_E_UNSUPPORTED_FOR_ATTACHING_PROFILER ((HRESULT)0x8013136Fu)
#define CORPROF_E_IRREVERSIBLE_INSTRUMENTATION_PRESENT ((HRESULT)0x80131370u)
#define CORPROF_E_RUNTIME_UNINITIALIZED ((HRESULT)0x80131371u)
#define CORPROF_E_IMMUTABLE_FLAGS_SET ((HRESULT)0x80131372u)
#define CORPROF_E_PROFILER_NOT_YET_INITIALIZED ((HRESULT)0x80131373u)
#define CORPROF_E_INCONSISTENT_WITH_FLAGS ((HRESULT)0x80131374u)
#define CORPROF_E_PROFILER_CANCEL_ACTIVATION ((HRESULT)0x80131375u)
#define CORPROF_E_CONCURRENT_GC_NOT_PROFILABLE ((HRESULT)0x80131376u)
#define CORPROF_E_DEBUGGING_DISABLED ((HRESULT)0x80131378u)
#define CORPROF_E_TIMEOUT_WAITING_FOR_CONCURRENT_GC ((HRESULT)0x80131379u)
#define CORPROF_E_MODULE_IS_DYNAMIC ((HRESULT)0x8013137Au)
#define CORPROF_E_CALLBACK4_REQUIRED ((HRESULT)0x8013137Bu)
#define CORPROF_E_REJIT_NOT_ENABLED ((HRESULT)0x8013137Cu)
#define CORPROF_E_FUNCTION_IS_COLLECTIBLE ((HRESULT)0x8013137Eu)
#define CORPROF_E_CALLBACK6_REQUIRED ((HRESULT)0x80131380u)
#define CORPROF_E_CALLBACK7_REQUIRED ((HRESULT)0x80131382u)
#define CORPROF_E_REJIT_INLINING_DISABLED ((HRESULT)0x80131383u)
#define CORPROF_E_SUSPENSION_IN_PROGRESS ((HRESULT)0x80131388u)
#define CORPROF_E_NOT_GC_OBJECT ((HRESULT)0x80131389u)
/* Newer runtimes only (ReJIT of an Edit-and-Continue module). */
#define CORPROF_E_MODULE_IS_ENC ((HRESULT)0x8013138Au)

/* ------------------------------------------------------------------------
 * Metadata types (corhdr.h, cor.h)
 * ------------------------------------------------------------------------ */

typedef uint32_t mdToken;
typedef mdToken mdModule;
typedef mdToken mdTypeRef;
typedef mdToken mdTypeDef;
typedef mdToken mdFieldDef;
typedef mdToken mdMethodDef;
typedef mdToken mdParamDef;
typedef mdToken mdInterfaceImpl;
typedef mdToken mdMemberRef;
typedef mdToken mdCustomAttribute;
typedef mdToken mdPermission;
typedef mdToken mdSignature;
typedef mdToken mdEvent;
typedef mdToken mdProperty;
typedef mdToken mdModuleRef;
typedef mdToken mdAssembly;
typedef mdToken mdAssemblyRef;
typedef mdToken mdFile;
typedef mdToken mdExportedType;
typedef mdToken mdManifestResource;
typedef mdToken mdTypeSpec;
typedef mdToken mdGenericParam;
typedef mdToken mdMethodSpec;
typedef mdToken mdGenericParamConstraint;
typedef mdToken mdString;
typedef mdToken mdCPToken;
typedef uint32_t RID;

typedef void *HCORENUM;
typedef uint8_t COR_SIGNATURE;
typedef COR_SIGNATURE *PCOR_SIGNATURE;
typedef const COR_SIGNATURE *PCCOR_SIGNATURE;
typedef const char *MDUTF8CSTR;
typedef char *MDUTF8STR;
typedef const void *UVCP_CONSTANT;

typedef enum CorTokenType {
    mdtModule = 0x00000000,
    mdtTypeRef = 0x01000000,
    mdtTypeDef = 0x02000000,
    mdtFieldDef = 0x04000000,
    mdtMethodDef = 0x06000000,
    mdtParamDef = 0x08000000,
    mdtInterfaceImpl = 0x09000000,
    mdtMemberRef = 0x0a000000,
    mdtCustomAttribute = 0x0c000000,
    mdtPermission = 0x0e000000,
    mdtSignature = 0x11000000,
    mdtEvent = 0x14000000,
    mdtProperty = 0x17000000,
    mdtMethodImpl = 0x19000000,
    mdtModuleRef = 0x1a000000,
    mdtTypeSpec = 0x1b000000,
    mdtAssembly = 0x20000000,
    mdtAssemblyRef = 0x23000000,
    mdtFile = 0x26000000,
    mdtExportedType = 0x27000000,
    mdtManifestResource = 0x28000000,
    mdtGenericParam = 0x2a000000,
    mdtMethodSpec = 0x2b000000,
    mdtGenericParamConstraint = 0x2c000000,
    mdtString = 0x70000000,
    mdtName = 0x71000000,
    mdtBaseType = 0x72000000
} CorTokenType;

#define RidFromToken(tk) ((RID)((tk) & 0x00ffffffu))
#define TypeFromToken(tk) ((ULONG32)((tk) & 0xff000000u))
#define TokenFromRid(rid, tktype) ((rid) | (tktype))
#define IsNilToken(tk) (RidFromToken(tk) == 0)
#define mdTokenNil ((mdToken)0)
#define mdTypeDefNil ((mdTypeDef)mdtTypeDef)
#define mdMethodDefNil ((mdMethodDef)mdtMethodDef)

/* CorOpenFlags (dwOpenFlags of GetModuleMetaData). */
typedef enum CorOpenFlags {
    ofRead = 0x00000000,
    ofWrite = 0x00000001,
    ofReadWriteMask = 0x00000001,
    ofCopyMemory = 0x00000002,
    ofReadOnly = 0x00000010,
    ofTakeOwnership = 0x00000020,
    ofNoTypeLib = 0x00000080,
    ofNoTransform = 0x00001000
} CorOpenFlags;

/* CorTypeAttr: the visibility bits (GetTypeDefProps' pdwTypeDefFlags). */
typedef enum CorTypeAttr {
    tdVisibilityMask = 0x00000007,
    tdNotPublic = 0x00000000,
    tdPublic = 0x00000001,
    tdNestedPublic = 0x00000002,
    tdNestedPrivate = 0x00000003,
    tdNestedFamily = 0x00000004,
    tdNestedAssembly = 0x00000005,
    tdNestedFamANDAssem = 0x00000006,
    tdNestedFamORAssem = 0x00000007,
    tdLayoutMask = 0x00000018,
    tdClassSemanticsMask = 0x00000020,
    tdInterface = 0x00000020
} CorTypeAttr;

typedef enum CorElementType {
    ELEMENT_TYPE_END = 0x00,
    ELEMENT_TYPE_VOID = 0x01,
    ELEMENT_TYPE_BOOLEAN = 0x02,
    ELEMENT_TYPE_CHAR = 0x03,
    ELEMENT_TYPE_I1 = 0x04,
    ELEMENT_TYPE_U1 = 0x05,
    ELEMENT_TYPE_I2 = 0x06,
    ELEMENT_TYPE_U2 = 0x07,
    ELEMENT_TYPE_I4 = 0x08,
    ELEMENT_TYPE_U4 = 0x09,
    ELEMENT_TYPE_I8 = 0x0a,
    ELEMENT_TYPE_U8 = 0x0b,
    ELEMENT_TYPE_R4 = 0x0c,
    ELEMENT_TYPE_R8 = 0x0d,
    ELEMENT_TYPE_STRING = 0x0e,
    ELEMENT_TYPE_PTR = 0x0f,
    ELEMENT_TYPE_BYREF = 0x10,
    ELEMENT_TYPE_VALUETYPE = 0x11,
    ELEMENT_TYPE_CLASS = 0x12,
    ELEMENT_TYPE_VAR = 0x13,
    ELEMENT_TYPE_ARRAY = 0x14,
    ELEMENT_TYPE_GENERICINST = 0x15,
    ELEMENT_TYPE_TYPEDBYREF = 0x16,
    ELEMENT_TYPE_I = 0x18,
    ELEMENT_TYPE_U = 0x19,
    ELEMENT_TYPE_FNPTR = 0x1b,
    ELEMENT_TYPE_OBJECT = 0x1c,
    ELEMENT_TYPE_SZARRAY = 0x1d,
    ELEMENT_TYPE_MVAR = 0x1e,
    ELEMENT_TYPE_CMOD_REQD = 0x1f,
    ELEMENT_TYPE_CMOD_OPT = 0x20,
    ELEMENT_TYPE_INTERNAL = 0x21,
    ELEMENT_TYPE_MAX = 0x22,
    ELEMENT_TYPE_MODIFIER = 0x40,
    ELEMENT_TYPE_SENTINEL = 0x41,
    ELEMENT_TYPE_PINNED = 0x45
} CorElementType;

/* CorCallingConvention: the first byte of a signature blob. */
typedef enum CorCallingConvention {
    IMAGE_CEE_CS_CALLCONV_DEFAULT = 0x0,
    IMAGE_CEE_CS_CALLCONV_C = 0x1,
    IMAGE_CEE_CS_CALLCONV_STDCALL = 0x2,
    IMAGE_CEE_CS_CALLCONV_THISCALL = 0x3,
    IMAGE_CEE_CS_CALLCONV_FASTCALL = 0x4,
    IMAGE_CEE_CS_CALLCONV_VARARG = 0x5,
    IMAGE_CEE_CS_CALLCONV_FIELD = 0x6,
    IMAGE_CEE_CS_CALLCONV_LOCAL_SIG = 0x7,
    IMAGE_CEE_CS_CALLCONV_PROPERTY = 0x8,
    IMAGE_CEE_CS_CALLCONV_UNMANAGED = 0x9,
    IMAGE_CEE_CS_CALLCONV_GENERICINST = 0xa,
    IMAGE_CEE_CS_CALLCONV_NATIVEVARARG = 0xb,
    IMAGE_CEE_CS_CALLCONV_MAX = 0xc,
    IMAGE_CEE_CS_CALLCONV_MASK = 0x0f,
    IMAGE_CEE_CS_CALLCONV_HASTHIS = 0x20,
    IMAGE_CEE_CS_CALLCONV_EXPLICITTHIS = 0x40,
    IMAGE_CEE_CS_CALLCONV_GENERIC = 0x10
} CorCallingConvention;

typedef struct COR_FIELD_OFFSET {
    mdFieldDef ridOfField;
    ULONG ulOffset;
} COR_FIELD_OFFSET;

typedef struct OSINFO {
    DWORD dwOSPlatformId;
    DWORD dwOSMajorVersion;
    DWORD dwOSMinorVersion;
} OSINFO;

typedef struct ASSEMBLYMETADATA {
    USHORT usMajorVersion;
    USHORT usMinorVersion;
    USHORT usBuildNumber;
    USHORT usRevisionNumber;
    LPWSTR szLocale;
    ULONG cbLocale;
    DWORD *rProcessor;
    ULONG ulProcessor;
    OSINFO *rOS;
    ULONG ulOS;
} ASSEMBLYMETADATA;

/* ------------------------------------------------------------------------
 * Profiling API types (corprof.idl)
 * ------------------------------------------------------------------------ */

typedef struct COR_IL_MAP {
    ULONG32 oldOffset;
    ULONG32 newOffset;
    BOOL fAccurate;
} COR_IL_MAP;

typedef enum CorDebugIlToNativeMappingTypes {
    NO_MAPPING = -1,
    PROLOG = -2,
    EPILOG = -3
} CorDebugIlToNativeMappingTypes;

typedef struct COR_DEBUG_IL_TO_NATIVE_MAP {
    ULONG32 ilOffset;
    ULONG32 nativeStartOffset;
    ULONG32 nativeEndOffset;
} COR_DEBUG_IL_TO_NATIVE_MAP;

typedef UINT_PTR ProcessID;
typedef UINT_PTR AssemblyID;
typedef UINT_PTR AppDomainID;
typedef UINT_PTR ModuleID;
typedef UINT_PTR ClassID;
typedef UINT_PTR ThreadID;
typedef UINT_PTR ContextID;
typedef UINT_PTR FunctionID;
typedef UINT_PTR ObjectID;
typedef UINT_PTR GCHandleID;
typedef UINT_PTR COR_PRF_ELT_INFO;
typedef UINT_PTR ReJITID;
typedef UINT_PTR COR_PRF_FRAME_INFO;
typedef UINT_PTR EVENTPIPE_PROVIDER;
typedef UINT_PTR EVENTPIPE_EVENT;
typedef UINT64 EVENTPIPE_SESSION;
typedef void **ObjectHandleID;

typedef union FunctionIDOrClientID {
    FunctionID functionID;
    UINT_PTR clientID;
} FunctionIDOrClientID;

typedef enum COR_PRF_SNAPSHOT_INFO {
    COR_PRF_SNAPSHOT_DEFAULT = 0x0,
    COR_PRF_SNAPSHOT_REGISTER_CONTEXT = 0x1,
    COR_PRF_SNAPSHOT_X86_OPTIMIZED = 0x2
} COR_PRF_SNAPSHOT_INFO;

typedef struct COR_PRF_FUNCTION_ARGUMENT_RANGE {
    UINT_PTR startAddress;
    ULONG length;
} COR_PRF_FUNCTION_ARGUMENT_RANGE;

typedef struct COR_PRF_FUNCTION_ARGUMENT_INFO {
    ULONG numRanges;
    ULONG totalArgumentSize;
    COR_PRF_FUNCTION_ARGUMENT_RANGE ranges[1]; /* numRanges entries */
} COR_PRF_FUNCTION_ARGUMENT_INFO;

typedef struct COR_PRF_CODE_INFO {
    UINT_PTR startAddress;
    SIZE_T size;
} COR_PRF_CODE_INFO;

typedef enum COR_PRF_STATIC_TYPE {
    COR_PRF_FIELD_NOT_A_STATIC = 0x0,
    COR_PRF_FIELD_APP_DOMAIN_STATIC = 0x1,
    COR_PRF_FIELD_THREAD_STATIC = 0x2,
    COR_PRF_FIELD_CONTEXT_STATIC = 0x4,
    COR_PRF_FIELD_RVA_STATIC = 0x8
} COR_PRF_STATIC_TYPE;

typedef struct COR_PRF_FUNCTION {
    FunctionID functionId;
    ReJITID reJitId;
} COR_PRF_FUNCTION;

typedef struct COR_PRF_ASSEMBLY_REFERENCE_INFO {
    void *pbPublicKeyOrToken;
    ULONG cbPublicKeyOrToken;
    LPCWSTR szName;
    ASSEMBLYMETADATA *pMetaData;
    void *pbHashValue;
    ULONG cbHashValue;
    DWORD dwAssemblyRefFlags;
} COR_PRF_ASSEMBLY_REFERENCE_INFO;

typedef struct COR_PRF_METHOD {
    ModuleID moduleId;
    mdMethodDef methodId;
} COR_PRF_METHOD;

/* Function types (not pointer types), as in the IDL: parameters and
 * variables take pointers to them. */
typedef UINT_PTR FunctionIDMapper(FunctionID funcId, BOOL *pbHookFunction);
typedef UINT_PTR FunctionIDMapper2(FunctionID funcId, void *clientData, BOOL *pbHookFunction);

/* Enter/leave/tailcall hooks.  The runtime saves no registers before calling
 * them: a real hook must be written to preserve every register it uses. */
typedef void FunctionEnter(FunctionID funcID);
typedef void FunctionLeave(FunctionID funcID);
typedef void FunctionTailcall(FunctionID funcID);
typedef void FunctionEnter2(FunctionID funcId, UINT_PTR clientData, COR_PRF_FRAME_INFO func,
                            COR_PRF_FUNCTION_ARGUMENT_INFO *argumentInfo);
typedef void FunctionLeave2(FunctionID funcId, UINT_PTR clientData, COR_PRF_FRAME_INFO func,
                            COR_PRF_FUNCTION_ARGUMENT_RANGE *retvalRange);
typedef void FunctionTailcall2(FunctionID funcId, UINT_PTR clientData, COR_PRF_FRAME_INFO func);
typedef void FunctionEnter3(FunctionIDOrClientID functionIDOrClientID);
typedef void FunctionLeave3(FunctionIDOrClientID functionIDOrClientID);
typedef void FunctionTailcall3(FunctionIDOrClientID functionIDOrClientID);
typedef void FunctionEnter3WithInfo(FunctionIDOrClientID functionIDOrClientID,
                                    COR_PRF_ELT_INFO eltInfo);
typedef void FunctionLeave3WithInfo(FunctionIDOrClientID functionIDOrClientID,
                                    COR_PRF_ELT_INFO eltInfo);
typedef void FunctionTailcall3WithInfo(FunctionIDOrClientID functionIDOrClientID,
                                       COR_PRF_ELT_INFO eltInfo);

typedef HRESULT StackSnapshotCallback(FunctionID funcId, UINT_PTR ip,
                                      COR_PRF_FRAME_INFO frameInfo, ULONG32 contextSize,
                                      BYTE context[], void *clientData);

typedef BOOL ObjectReferenceCallback(ObjectID root, ObjectID *reference, void *clientData);

/* Unlike the callback types above, ObjectCallback is a pointer type. */
typedef BOOL (*ObjectCallback)(ObjectID object, void *callbackState);

/* COR_PRF_MONITOR: SetEventMask / the low word of SetEventMask2. */
typedef uint32_t COR_PRF_MONITOR;
#define COR_PRF_MONITOR_NONE 0x00000000u
#define COR_PRF_MONITOR_FUNCTION_UNLOADS 0x00000001u
#define COR_PRF_MONITOR_CLASS_LOADS 0x00000002u
#define COR_PRF_MONITOR_MODULE_LOADS 0x00000004u
#define COR_PRF_MONITOR_ASSEMBLY_LOADS 0x00000008u
#define COR_PRF_MONITOR_APPDOMAIN_LOADS 0x00000010u
#define COR_PRF_MONITOR_JIT_COMPILATION 0x00000020u
#define COR_PRF_MONITOR_EXCEPTIONS 0x00000040u
#define COR_PRF_MONITOR_GC 0x00000080u
#define COR_PRF_MONITOR_OBJECT_ALLOCATED 0x00000100u
#define COR_PRF_MONITOR_THREADS 0x00000200u
#define COR_PRF_MONITOR_REMOTING 0x00000400u
#define COR_PRF_MONITOR_CODE_TRANSITIONS 0x00000800u
#define COR_PRF_MONITOR_ENTERLEAVE 0x00001000u
#define COR_PRF_MONITOR_CCW 0x00002000u
#define COR_PRF_MONITOR_REMOTING_COOKIE (0x00004000u | COR_PRF_MONITOR_REMOTING)
#define COR_PRF_MONITOR_REMOTING_ASYNC (0x00008000u | COR_PRF_MONITOR_REMOTING)
#define COR_PRF_MONITOR_SUSPENDS 0x00010000u
#define COR_PRF_MONITOR_CACHE_SEARCHES 0x00020000u
#define COR_PRF_ENABLE_REJIT 0x00040000u
#define COR_PRF_ENABLE_INPROC_DEBUGGING 0x00080000u
#define COR_PRF_ENABLE_JIT_MAPS 0x00100000u
#define COR_PRF_DISABLE_INLINING 0x00200000u
#define COR_PRF_DISABLE_OPTIMIZATIONS 0x00400000u
#define COR_PRF_ENABLE_OBJECT_ALLOCATED 0x00800000u
#define COR_PRF_MONITOR_CLR_EXCEPTIONS 0x01000000u
#define COR_PRF_MONITOR_ALL 0x0107FFFFu
#define COR_PRF_ENABLE_FUNCTION_ARGS 0x02000000u
#define COR_PRF_ENABLE_FUNCTION_RETVAL 0x04000000u
#define COR_PRF_ENABLE_FRAME_INFO 0x08000000u
#define COR_PRF_ENABLE_STACK_SNAPSHOT 0x10000000u
#define COR_PRF_USE_PROFILE_IMAGES 0x20000000u
#define COR_PRF_DISABLE_TRANSPARENCY_CHECKS_UNDER_FULL_TRUST 0x40000000u
#define COR_PRF_DISABLE_ALL_NGEN_IMAGES 0x80000000u
#define COR_PRF_ALL 0x8FFFFFFFu
#define COR_PRF_REQUIRE_PROFILE_IMAGE                                                             \
    (COR_PRF_USE_PROFILE_IMAGES | COR_PRF_MONITOR_CODE_TRANSITIONS | COR_PRF_MONITOR_ENTERLEAVE)
#define COR_PRF_ALLOWABLE_AFTER_ATTACH                                                            \
    (COR_PRF_MONITOR_THREADS | COR_PRF_MONITOR_MODULE_LOADS | COR_PRF_MONITOR_ASSEMBLY_LOADS |    \
     COR_PRF_MONITOR_APPDOMAIN_LOADS | COR_PRF_ENABLE_STACK_SNAPSHOT | COR_PRF_MONITOR_GC |       \
     COR_PRF_MONITOR_SUSPENDS | COR_PRF_MONITOR_CLASS_LOADS | COR_PRF_MONITOR_EXCEPTIONS |        \
     COR_PRF_MONITOR_JIT_COMPILATION | COR_PRF_DISABLE_INLINING |                                 \
     COR_PRF_DISABLE_OPTIMIZATIONS | COR_PRF_ENABLE_REJIT)
#define COR_PRF_ALLOWABLE_NOTIFICATION_PROFILER                                                   \
    (COR_PRF_MONITOR_FUNCTION_UNLOADS | COR_PRF_MONITOR_CLASS_LOADS |                             \
     COR_PRF_MONITOR_MODULE_LOADS | COR_PRF_MONITOR_ASSEMBLY_LOADS |                              \
     COR_PRF_MONITOR_APPDOMAIN_LOADS | COR_PRF_MONITOR_JIT_COMPILATION |                          \
     COR_PRF_MONITOR_EXCEPTIONS | COR_PRF_MONITOR_OBJECT_ALLOCATED | COR_PRF_MONITOR_THREADS |    \
     COR_PRF_MONITOR_CODE_TRANSITIONS | COR_PRF_MONITOR_CCW | COR_PRF_MONITOR_SUSPENDS |          \
     COR_PRF_MONITOR_CACHE_SEARCHES | COR_PRF_DISABLE_INLINING | COR_PRF_DISABLE_OPTIMIZATIONS |  \
     COR_PRF_ENABLE_OBJECT_ALLOCATED | COR_PRF_MONITOR_CLR_EXCEPTIONS |                           \
     COR_PRF_ENABLE_STACK_SNAPSHOT | COR_PRF_USE_PROFILE_IMAGES | COR_PRF_DISABLE_ALL_NGEN_IMAGES)
#define COR_PRF_MONITOR_IMMUTABLE                                                                 \
    (COR_PRF_MONITOR_CODE_TRANSITIONS | COR_PRF_MONITOR_REMOTING |                                \
     COR_PRF_MONITOR_REMOTING_COOKIE | COR_PRF_MONITOR_REMOTING_ASYNC |                           \
     COR_PRF_ENABLE_INPROC_DEBUGGING | COR_PRF_ENABLE_JIT_MAPS | COR_PRF_ENABLE_OBJECT_ALLOCATED | \
     COR_PRF_ENABLE_FUNCTION_ARGS | COR_PRF_ENABLE_FUNCTION_RETVAL | COR_PRF_ENABLE_FRAME_INFO |  \
     COR_PRF_USE_PROFILE_IMAGES | COR_PRF_DISABLE_TRANSPARENCY_CHECKS_UNDER_FULL_TRUST |          \
     COR_PRF_DISABLE_ALL_NGEN_IMAGES)

/* COR_PRF_HIGH_MONITOR: the high word of SetEventMask2. */
typedef uint32_t COR_PRF_HIGH_MONITOR;
#define COR_PRF_HIGH_MONITOR_NONE 0x00000000u
#define COR_PRF_HIGH_ADD_ASSEMBLY_REFERENCES 0x00000001u
#define COR_PRF_HIGH_IN_MEMORY_SYMBOLS_UPDATED 0x00000002u
#define COR_PRF_HIGH_MONITOR_DYNAMIC_FUNCTION_UNLOADS 0x00000004u
#define COR_PRF_HIGH_DISABLE_TIERED_COMPILATION 0x00000008u
#define COR_PRF_HIGH_BASIC_GC 0x00000010u
#define COR_PRF_HIGH_MONITOR_GC_MOVED_OBJECTS 0x00000020u
#define COR_PRF_HIGH_REQUIRE_PROFILE_IMAGE 0x00000000u
#define COR_PRF_HIGH_MONITOR_LARGEOBJECT_ALLOCATED 0x00000040u
#define COR_PRF_HIGH_MONITOR_EVENT_PIPE 0x00000080u
#define COR_PRF_HIGH_MONITOR_PINNEDOBJECT_ALLOCATED 0x00000100u
#define COR_PRF_HIGH_ALLOWABLE_AFTER_ATTACH                                                       \
    (COR_PRF_HIGH_IN_MEMORY_SYMBOLS_UPDATED | COR_PRF_HIGH_MONITOR_DYNAMIC_FUNCTION_UNLOADS |     \
     COR_PRF_HIGH_BASIC_GC | COR_PRF_HIGH_MONITOR_GC_MOVED_OBJECTS |                              \
     COR_PRF_HIGH_MONITOR_LARGEOBJECT_ALLOCATED | COR_PRF_HIGH_MONITOR_EVENT_PIPE)
#define COR_PRF_HIGH_ALLOWABLE_NOTIFICATION_PROFILER                                              \
    (COR_PRF_HIGH_IN_MEMORY_SYMBOLS_UPDATED | COR_PRF_HIGH_MONITOR_DYNAMIC_FUNCTION_UNLOADS |     \
     COR_PRF_HIGH_DISABLE_TIERED_COMPILATION | COR_PRF_HIGH_BASIC_GC |                            \
     COR_PRF_HIGH_MONITOR_GC_MOVED_OBJECTS | COR_PRF_HIGH_MONITOR_LARGEOBJECT_ALLOCATED |         \
     COR_PRF_HIGH_MONITOR_EVENT_PIPE)
#define COR_PRF_HIGH_MONITOR_IMMUTABLE COR_PRF_HIGH_DISABLE_TIERED_COMPILATION

/* COR_PRF_MISC: special IDs. */
typedef uint32_t COR_PRF_MISC;
#define PROFILER_PARENT_UNKNOWN 0xFFFFFFFDu
#define PROFILER_GLOBAL_CLASS 0xFFFFFFFEu
#define PROFILER_GLOBAL_MODULE 0xFFFFFFFFu

typedef enum COR_PRF_JIT_CACHE {
    COR_PRF_CACHED_FUNCTION_FOUND = 0,
    COR_PRF_CACHED_FUNCTION_NOT_FOUND = 1
} COR_PRF_JIT_CACHE;

typedef enum COR_PRF_TRANSITION_REASON {
    COR_PRF_TRANSITION_CALL = 0,
    COR_PRF_TRANSITION_RETURN = 1
} COR_PRF_TRANSITION_REASON;

typedef enum COR_PRF_SUSPEND_REASON {
    COR_PRF_SUSPEND_OTHER = 0,
    COR_PRF_SUSPEND_FOR_GC = 1,
    COR_PRF_SUSPEND_FOR_APPDOMAIN_SHUTDOWN = 2,
    COR_PRF_SUSPEND_FOR_CODE_PITCHING = 3,
    COR_PRF_SUSPEND_FOR_SHUTDOWN = 4,
    COR_PRF_SUSPEND_FOR_INPROC_DEBUGGER = 6,
    COR_PRF_SUSPEND_FOR_GC_PREP = 7,
    COR_PRF_SUSPEND_FOR_REJIT = 8,
    COR_PRF_SUSPEND_FOR_PROFILER = 9
} COR_PRF_SUSPEND_REASON;

typedef enum COR_PRF_RUNTIME_TYPE {
    COR_PRF_DESKTOP_CLR = 0x1,
    COR_PRF_CORE_CLR = 0x2
} COR_PRF_RUNTIME_TYPE;

typedef enum COR_PRF_REJIT_FLAGS {
    COR_PRF_REJIT_BLOCK_INLINING = 0x1,
    COR_PRF_REJIT_INLINING_CALLBACKS = 0x2
} COR_PRF_REJIT_FLAGS;

typedef enum COR_PRF_EVENTPIPE_PARAM_TYPE {
    COR_PRF_EVENTPIPE_OBJECT = 1,
    COR_PRF_EVENTPIPE_BOOLEAN = 3,
    COR_PRF_EVENTPIPE_CHAR = 4,
    COR_PRF_EVENTPIPE_SBYTE = 5,
    COR_PRF_EVENTPIPE_BYTE = 6,
    COR_PRF_EVENTPIPE_INT16 = 7,
    COR_PRF_EVENTPIPE_UINT16 = 8,
    COR_PRF_EVENTPIPE_INT32 = 9,
    COR_PRF_EVENTPIPE_UINT32 = 10,
    COR_PRF_EVENTPIPE_INT64 = 11,
    COR_PRF_EVENTPIPE_UINT64 = 12,
    COR_PRF_EVENTPIPE_SINGLE = 13,
    COR_PRF_EVENTPIPE_DOUBLE = 14,
    COR_PRF_EVENTPIPE_DECIMAL = 15,
    COR_PRF_EVENTPIPE_DATETIME = 16,
    COR_PRF_EVENTPIPE_GUID = 17,
    COR_PRF_EVENTPIPE_STRING = 18,
    COR_PRF_EVENTPIPE_ARRAY = 19
} COR_PRF_EVENTPIPE_PARAM_TYPE;

typedef enum COR_PRF_EVENTPIPE_LEVEL {
    COR_PRF_EVENTPIPE_LOGALWAYS = 0,
    COR_PRF_EVENTPIPE_CRITICAL = 1,
    COR_PRF_EVENTPIPE_ERROR = 2,
    COR_PRF_EVENTPIPE_WARNING = 3,
    COR_PRF_EVENTPIPE_INFORMATIONAL = 4,
    COR_PRF_EVENTPIPE_VERBOSE = 5
} COR_PRF_EVENTPIPE_LEVEL;

typedef struct COR_PRF_EVENTPIPE_PROVIDER_CONFIG {
    const WCHAR *providerName;
    UINT64 keywords;
    UINT32 loggingLevel;
    const WCHAR *filterData; /* "key1=value1;key2=value2;" */
} COR_PRF_EVENTPIPE_PROVIDER_CONFIG;

typedef struct COR_PRF_EVENTPIPE_PARAM_DESC {
    UINT32 type;
    UINT32 elementType; /* when type is COR_PRF_EVENTPIPE_ARRAY */
    const WCHAR *name;
} COR_PRF_EVENTPIPE_PARAM_DESC;

typedef struct COR_PRF_EVENT_DATA {
    UINT64 ptr;
    UINT32 size;
    UINT32 reserved;
} COR_PRF_EVENT_DATA;

typedef struct COR_PRF_FILTER_DATA {
    UINT64 Ptr;
    UINT32 Size;
    UINT32 Type;
} COR_PRF_FILTER_DATA;

typedef void EventPipeProviderCallback(const UINT8 *source_id, UINT32 is_enabled, UINT8 level,
                                       UINT64 match_any_keywords, UINT64 match_all_keywords,
                                       COR_PRF_FILTER_DATA *filter_data, void *callback_data);

typedef enum COR_PRF_HANDLE_TYPE {
    COR_PRF_HANDLE_TYPE_WEAK = 0x1,
    COR_PRF_HANDLE_TYPE_STRONG = 0x2,
    COR_PRF_HANDLE_TYPE_PINNED = 0x3
} COR_PRF_HANDLE_TYPE;

typedef enum COR_PRF_GC_ROOT_KIND {
    COR_PRF_GC_ROOT_STACK = 1,
    COR_PRF_GC_ROOT_FINALIZER = 2,
    COR_PRF_GC_ROOT_HANDLE = 3,
    COR_PRF_GC_ROOT_OTHER = 0
} COR_PRF_GC_ROOT_KIND;

typedef enum COR_PRF_GC_ROOT_FLAGS {
    COR_PRF_GC_ROOT_PINNING = 0x1,
    COR_PRF_GC_ROOT_WEAKREF = 0x2,
    COR_PRF_GC_ROOT_INTERIOR = 0x4,
    COR_PRF_GC_ROOT_REFCOUNTED = 0x8
} COR_PRF_GC_ROOT_FLAGS;

typedef enum COR_PRF_FINALIZER_FLAGS {
    COR_PRF_FINALIZER_CRITICAL = 0x1
} COR_PRF_FINALIZER_FLAGS;

typedef enum COR_PRF_GC_GENERATION {
    COR_PRF_GC_GEN_0 = 0,
    COR_PRF_GC_GEN_1 = 1,
    COR_PRF_GC_GEN_2 = 2,
    COR_PRF_GC_LARGE_OBJECT_HEAP = 3,
    COR_PRF_GC_PINNED_OBJECT_HEAP = 4
} COR_PRF_GC_GENERATION;

typedef struct COR_PRF_GC_GENERATION_RANGE {
    COR_PRF_GC_GENERATION generation;
    ObjectID rangeStart;
    UINT_PTR rangeLength;
    UINT_PTR rangeLengthReserved;
} COR_PRF_GC_GENERATION_RANGE;

typedef struct COR_PRF_NONGC_HEAP_RANGE {
    ObjectID rangeStart;
    UINT_PTR rangeLength;
    UINT_PTR rangeLengthReserved;
} COR_PRF_NONGC_HEAP_RANGE;

typedef enum COR_PRF_CLAUSE_TYPE {
    COR_PRF_CLAUSE_NONE = 0,
    COR_PRF_CLAUSE_FILTER = 1,
    COR_PRF_CLAUSE_CATCH = 2,
    COR_PRF_CLAUSE_FINALLY = 3
} COR_PRF_CLAUSE_TYPE;

typedef struct COR_PRF_EX_CLAUSE_INFO {
    COR_PRF_CLAUSE_TYPE clauseType;
    UINT_PTR programCounter;
    UINT_PTR framePointer;
    UINT_PTR shadowStackPointer;
} COR_PRF_EX_CLAUSE_INFO;

typedef enum COR_PRF_GC_REASON {
    COR_PRF_GC_INDUCED = 1,
    COR_PRF_GC_OTHER = 0
} COR_PRF_GC_REASON;

typedef enum COR_PRF_MODULE_FLAGS {
    COR_PRF_MODULE_DISK = 0x00000001,
    COR_PRF_MODULE_NGEN = 0x00000002,
    COR_PRF_MODULE_DYNAMIC = 0x00000004,
    COR_PRF_MODULE_COLLECTIBLE = 0x00000008,
    COR_PRF_MODULE_RESOURCE = 0x00000010,
    COR_PRF_MODULE_FLAT_LAYOUT = 0x00000020,
    COR_PRF_MODULE_WINDOWS_RUNTIME = 0x00000040
} COR_PRF_MODULE_FLAGS;

typedef enum COR_PRF_CODEGEN_FLAGS {
    COR_PRF_CODEGEN_DISABLE_INLINING = 0x0001,
    COR_PRF_CODEGEN_DISABLE_ALL_OPTIMIZATIONS = 0x0002,
    COR_PRF_CODEGEN_DEBUG_INFO = 0x0003 /* sic: the IDL's value, not a new bit */
} COR_PRF_CODEGEN_FLAGS;

/* ------------------------------------------------------------------------
 * Layout checks (x64 PAL)
 * ------------------------------------------------------------------------ */

_Static_assert(sizeof(GUID) == 16, "GUID");
_Static_assert(sizeof(WCHAR) == 2 && sizeof(ULONG) == 4 && sizeof(BOOL) == 4, "PAL scalars");
_Static_assert(sizeof(UINT_PTR) == sizeof(void *), "UINT_PTR");
_Static_assert(sizeof(CorTokenType) == 4 && sizeof(CorOpenFlags) == 4 &&
                   sizeof(CorTypeAttr) == 4 && sizeof(CorElementType) == 4 &&
                   sizeof(CorCallingConvention) == 4,
               "metadata enums are 4 bytes");
_Static_assert(sizeof(CorDebugIlToNativeMappingTypes) == 4 && sizeof(COR_PRF_SNAPSHOT_INFO) == 4 &&
                   sizeof(COR_PRF_STATIC_TYPE) == 4 && sizeof(COR_PRF_JIT_CACHE) == 4 &&
                   sizeof(COR_PRF_TRANSITION_REASON) == 4 && sizeof(COR_PRF_SUSPEND_REASON) == 4 &&
                   sizeof(COR_PRF_RUNTIME_TYPE) == 4 && sizeof(COR_PRF_REJIT_FLAGS) == 4 &&
                   sizeof(COR_PRF_EVENTPIPE_PARAM_TYPE) == 4 &&
                   sizeof(COR_PRF_EVENTPIPE_LEVEL) == 4 && sizeof(COR_PRF_HANDLE_TYPE) == 4 &&
                   sizeof(COR_PRF_GC_ROOT_KIND) == 4 && sizeof(COR_PRF_GC_ROOT_FLAGS) == 4 &&
                   sizeof(COR_PRF_FINALIZER_FLAGS) == 4 && sizeof(COR_PRF_GC_GENERATION) == 4 &&
                   sizeof(COR_PRF_CLAUSE_TYPE) == 4 && sizeof(COR_PRF_GC_REASON) == 4 &&
                   sizeof(COR_PRF_MODULE_FLAGS) == 4 && sizeof(COR_PRF_CODEGEN_FLAGS) == 4,
               "profiling enums are 4 bytes");
_Static_assert(sizeof(COR_IL_MAP) == 12 && sizeof(COR_DEBUG_IL_TO_NATIVE_MAP) == 12 &&
                   sizeof(COR_FIELD_OFFSET) == 8,
               "32-bit records");
_Static_assert(sizeof(COR_PRF_CODE_INFO) == 16 && sizeof(COR_PRF_FUNCTION) == 16 &&
                   sizeof(COR_PRF_METHOD) == 16 && sizeof(COR_PRF_FUNCTION_ARGUMENT_RANGE) == 16 &&
                   sizeof(COR_PRF_FUNCTION_ARGUMENT_INFO) == 24 &&
                   sizeof(COR_PRF_GC_GENERATION_RANGE) == 32 &&
                   sizeof(COR_PRF_NONGC_HEAP_RANGE) == 24 && sizeof(COR_PRF_EX_CLAUSE_INFO) == 32 &&
                   sizeof(COR_PRF_EVENTPIPE_PROVIDER_CONFIG) == 32 &&
                   sizeof(COR_PRF_EVENTPIPE_PARAM_DESC) == 16 && sizeof(COR_PRF_EVENT_DATA) == 16 &&
                   sizeof(COR_PRF_FILTER_DATA) == 16 && sizeof(FunctionIDOrClientID) == 8,
               "x64 layouts");

#endif
