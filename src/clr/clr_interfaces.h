/*
 * clr_interfaces: our own C declarations of the COM interfaces corscope
 * uses or implements: IUnknown, IClassFactory, ICorProfilerCallback..11,
 * ICorProfilerInfo..15, the ICorProfiler*Enum interfaces,
 * IMetaDataImport/IMetaDataImport2, IMethodMalloc, ICorProfilerFunctionControl
 * and the first slots of IMetaDataEmit.  Each interface is written once, as
 * an X-macro list of its methods in vtable slot order, transcribed from
 * corprof.idl and cor.h in dotnet/runtime.  The vtable structs at the end
 * are generated from those lists, as can be anything else that needs the
 * slots (default callback bodies, slot-name tables for logging).
 *
 * An entry is X(version, return type, name, (T *This, parameters)), where
 * version is the interface version that introduced the method (0 for
 * IUnknown's three).  The order is the ABI: never sort, insert or drop
 * entries, including the ones nobody calls.  A derived interface's list
 * starts with its base's, so ICorProfilerCallback11 and ICorProfilerInfo15
 * are declared whole and serve for every lower version: a pointer to a
 * lower version may only use the slots of that version (check the version
 * the runtime answered QueryInterface with).
 */
#ifndef CORSCOPE_CLR_INTERFACES_H
#define CORSCOPE_CLR_INTERFACES_H

#include "clr/clr_types.h"

/* Interfaces declared with a vtable below. */
typedef struct IUnknown IUnknown;
typedef struct IClassFactory IClassFactory;
typedef struct ICorProfilerCallback11 ICorProfilerCallback11;
typedef struct ICorProfilerInfo15 ICorProfilerInfo15;
typedef struct ICorProfilerThreadEnum ICorProfilerThreadEnum;
typedef struct ICorProfilerModuleEnum ICorProfilerModuleEnum;
typedef struct ICorProfilerFunctionEnum ICorProfilerFunctionEnum;
typedef struct ICorProfilerObjectEnum ICorProfilerObjectEnum;
typedef struct ICorProfilerMethodEnum ICorProfilerMethodEnum;
typedef struct IMetaDataImport IMetaDataImport;
typedef struct IMetaDataEmit IMetaDataEmit;
typedef struct IMetaDataImport2 IMetaDataImport2;
typedef struct IMethodMalloc IMethodMalloc;
typedef struct ICorProfilerFunctionControl ICorProfilerFunctionControl;

/* Interfaces that only appear behind pointers; we never call them. */
typedef struct ICorProfilerAssemblyReferenceProvider ICorProfilerAssemblyReferenceProvider;
typedef struct IMetaDataAssemblyImport IMetaDataAssemblyImport;

#define CLR_IUNKNOWN_METHODS(X, T) \
    X(0, HRESULT, QueryInterface, (T *This, REFIID riid, void **ppvObject)) \
    X(0, ULONG, AddRef, (T *This)) \
    X(0, ULONG, Release, (T *This))

/* IClassFactory (unknwn.idl) */
#define CLR_CLASSFACTORY_METHODS(X, T) \
    CLR_IUNKNOWN_METHODS(X, T) \
    X(1, HRESULT, CreateInstance, (T *This, IUnknown *pUnkOuter, REFIID riid, void **ppvObject)) \
    X(1, HRESULT, LockServer, (T *This, BOOL fLock))

/* ICorProfilerCallback .. ICorProfilerCallback11: implemented by us. */
#define CLR_CALLBACK_METHODS(X, T) \
    CLR_IUNKNOWN_METHODS(X, T) \
    /* ICorProfilerCallback */ \
    X(1, HRESULT, Initialize, (T *This, IUnknown *pICorProfilerInfoUnk)) \
    X(1, HRESULT, Shutdown, (T *This)) \
    X(1, HRESULT, AppDomainCreationStarted, (T *This, AppDomainID appDomainId)) \
    X(1, HRESULT, AppDomainCreationFinished, (T *This, AppDomainID appDomainId, HRESULT hrStatus)) \
    X(1, HRESULT, AppDomainShutdownStarted, (T *This, AppDomainID appDomainId)) \
    X(1, HRESULT, AppDomainShutdownFinished, (T *This, AppDomainID appDomainId, HRESULT hrStatus)) \
    X(1, HRESULT, AssemblyLoadStarted, (T *This, AssemblyID assemblyId)) \
    X(1, HRESULT, AssemblyLoadFinished, (T *This, AssemblyID assemblyId, HRESULT hrStatus)) \
    X(1, HRESULT, AssemblyUnloadStarted, (T *This, AssemblyID assemblyId)) \
    X(1, HRESULT, AssemblyUnloadFinished, (T *This, AssemblyID assemblyId, HRESULT hrStatus)) \
    X(1, HRESULT, ModuleLoadStarted, (T *This, ModuleID moduleId)) \
    X(1, HRESULT, ModuleLoadFinished, (T *This, ModuleID moduleId, HRESULT hrStatus)) \
    X(1, HRESULT, ModuleUnloadStarted, (T *This, ModuleID moduleId)) \
    X(1, HRESULT, ModuleUnloadFinished, (T *This, ModuleID moduleId, HRESULT hrStatus)) \
    X(1, HRESULT, ModuleAttachedToAssembly, (T *This, ModuleID moduleId, AssemblyID AssemblyId)) \
    X(1, HRESULT, ClassLoadStarted, (T *This, ClassID classId)) \
    X(1, HRESULT, ClassLoadFinished, (T *This, ClassID classId, HRESULT hrStatus)) \
    X(1, HRESULT, ClassUnloadStarted, (T *This, ClassID classId)) \
    X(1, HRESULT, ClassUnloadFinished, (T *This, ClassID classId, HRESULT hrStatus)) \
    X(1, HRESULT, FunctionUnloadStarted, (T *This, FunctionID functionId)) \
    X(1, HRESULT, JITCompilationStarted, (T *This, FunctionID functionId, BOOL fIsSafeToBlock)) \
    X(1, HRESULT, JITCompilationFinished, (T *This, FunctionID functionId, HRESULT hrStatus, \
        BOOL fIsSafeToBlock)) \
    X(1, HRESULT, JITCachedFunctionSearchStarted, (T *This, FunctionID functionId, \
        BOOL *pbUseCachedFunction)) \
    X(1, HRESULT, JITCachedFunctionSearchFinished, (T *This, FunctionID functionId, \
        COR_PRF_JIT_CACHE result)) \
    X(1, HRESULT, JITFunctionPitched, (T *This, FunctionID functionId)) \
    X(1, HRESULT, JITInlining, (T *This, FunctionID callerId, FunctionID calleeId, \
        BOOL *pfShouldInline)) \
    X(1, HRESULT, ThreadCreated, (T *This, ThreadID threadId)) \
    X(1, HRESULT, ThreadDestroyed, (T *This, ThreadID threadId)) \
    X(1, HRESULT, ThreadAssignedToOSThread, (T *This, ThreadID managedThreadId, DWORD osThreadId)) \
    X(1, HRESULT, RemotingClientInvocationStarted, (T *This)) \
    X(1, HRESULT, RemotingClientSendingMessage, (T *This, GUID *pCookie, BOOL fIsAsync)) \
    X(1, HRESULT, RemotingClientReceivingReply, (T *This, GUID *pCookie, BOOL fIsAsync)) \
    X(1, HRESULT, RemotingClientInvocationFinished, (T *This)) \
    X(1, HRESULT, RemotingServerReceivingMessage, (T *This, GUID *pCookie, BOOL fIsAsync)) \
    X(1, HRESULT, RemotingServerInvocationStarted, (T *This)) \
    X(1, HRESULT, RemotingServerInvocationReturned, (T *This)) \
    X(1, HRESULT, RemotingServerSendingReply, (T *This, GUID *pCookie, BOOL fIsAsync)) \
    X(1, HRESULT, UnmanagedToManagedTransition, (T *This, FunctionID functionId, \
        COR_PRF_TRANSITION_REASON reason)) \
    X(1, HRESULT, ManagedToUnmanagedTransition, (T *This, FunctionID functionId, \
        COR_PRF_TRANSITION_REASON reason)) \
    X(1, HRESULT, RuntimeSuspendStarted, (T *This, COR_PRF_SUSPEND_REASON suspendReason)) \
    X(1, HRESULT, RuntimeSuspendFinished, (T *This)) \
    X(1, HRESULT, RuntimeSuspendAborted, (T *This)) \
    X(1, HRESULT, RuntimeResumeStarted, (T *This)) \
    X(1, HRESULT, RuntimeResumeFinished, (T *This)) \
    X(1, HRESULT, RuntimeThreadSuspended, (T *This, ThreadID threadId)) \
    X(1, HRESULT, RuntimeThreadResumed, (T *This, ThreadID threadId)) \
    X(1, HRESULT, MovedReferences, (T *This, ULONG cMovedObjectIDRanges, \
        ObjectID oldObjectIDRangeStart[], ObjectID newObjectIDRangeStart[], \
        ULONG cObjectIDRangeLength[])) \
    X(1, HRESULT, ObjectAllocated, (T *This, ObjectID objectId, ClassID classId)) \
    X(1, HRESULT, ObjectsAllocatedByClass, (T *This, ULONG cClassCount, ClassID classIds[], \
        ULONG cObjects[])) \
    X(1, HRESULT, ObjectReferences, (T *This, ObjectID objectId, ClassID classId, \
        ULONG cObjectRefs, ObjectID objectRefIds[])) \
    X(1, HRESULT, RootReferences, (T *This, ULONG cRootRefs, ObjectID rootRefIds[])) \
    X(1, HRESULT, ExceptionThrown, (T *This, ObjectID thrownObjectId)) \
    X(1, HRESULT, ExceptionSearchFunctionEnter, (T *This, FunctionID functionId)) \
    X(1, HRESULT, ExceptionSearchFunctionLeave, (T *This)) \
    X(1, HRESULT, ExceptionSearchFilterEnter, (T *This, FunctionID functionId)) \
    X(1, HRESULT, ExceptionSearchFilterLeave, (T *This)) \
    X(1, HRESULT, ExceptionSearchCatcherFound, (T *This, FunctionID functionId)) \
    /* the IDL calls this parameter __unused, a reserved name in C */ \
    X(1, HRESULT, ExceptionOSHandlerEnter, (T *This, UINT_PTR unused_)) \
    X(1, HRESULT, ExceptionOSHandlerLeave, (T *This, UINT_PTR unused_)) \
    X(1, HRESULT, ExceptionUnwindFunctionEnter, (T *This, FunctionID functionId)) \
    X(1, HRESULT, ExceptionUnwindFunctionLeave, (T *This)) \
    X(1, HRESULT, ExceptionUnwindFinallyEnter, (T *This, FunctionID functionId)) \
    X(1, HRESULT, ExceptionUnwindFinallyLeave, (T *This)) \
    X(1, HRESULT, ExceptionCatcherEnter, (T *This, FunctionID functionId, ObjectID objectId)) \
    X(1, HRESULT, ExceptionCatcherLeave, (T *This)) \
    X(1, HRESULT, COMClassicVTableCreated, (T *This, ClassID wrappedClassId, \
        REFGUID implementedIID, void *pVTable, ULONG cSlots)) \
    X(1, HRESULT, COMClassicVTableDestroyed, (T *This, ClassID wrappedClassId, \
        REFGUID implementedIID, void *pVTable)) \
    X(1, HRESULT, ExceptionCLRCatcherFound, (T *This)) \
    X(1, HRESULT, ExceptionCLRCatcherExecute, (T *This)) \
    /* ICorProfilerCallback2 */ \
    X(2, HRESULT, ThreadNameChanged, (T *This, ThreadID threadId, ULONG cchName, WCHAR name[])) \
    X(2, HRESULT, GarbageCollectionStarted, (T *This, int cGenerations, BOOL generationCollected[], \
        COR_PRF_GC_REASON reason)) \
    X(2, HRESULT, SurvivingReferences, (T *This, ULONG cSurvivingObjectIDRanges, \
        ObjectID objectIDRangeStart[], ULONG cObjectIDRangeLength[])) \
    X(2, HRESULT, GarbageCollectionFinished, (T *This)) \
    X(2, HRESULT, FinalizeableObjectQueued, (T *This, DWORD finalizerFlags, ObjectID objectID)) \
    X(2, HRESULT, RootReferences2, (T *This, ULONG cRootRefs, ObjectID rootRefIds[], \
        COR_PRF_GC_ROOT_KIND rootKinds[], COR_PRF_GC_ROOT_FLAGS rootFlags[], UINT_PTR rootIds[])) \
    X(2, HRESULT, HandleCreated, (T *This, GCHandleID handleId, ObjectID initialObjectId)) \
    X(2, HRESULT, HandleDestroyed, (T *This, GCHandleID handleId)) \
    /* ICorProfilerCallback3 */ \
    X(3, HRESULT, InitializeForAttach, (T *This, IUnknown *pCorProfilerInfoUnk, void *pvClientData, \
        UINT cbClientData)) \
    X(3, HRESULT, ProfilerAttachComplete, (T *This)) \
    X(3, HRESULT, ProfilerDetachSucceeded, (T *This)) \
    /* ICorProfilerCallback4 */ \
    X(4, HRESULT, ReJITCompilationStarted, (T *This, FunctionID functionId, ReJITID rejitId, \
        BOOL fIsSafeToBlock)) \
    X(4, HRESULT, GetReJITParameters, (T *This, ModuleID moduleId, mdMethodDef methodId, \
        ICorProfilerFunctionControl *pFunctionControl)) \
    X(4, HRESULT, ReJITCompilationFinished, (T *This, FunctionID functionId, ReJITID rejitId, \
        HRESULT hrStatus, BOOL fIsSafeToBlock)) \
    X(4, HRESULT, ReJITError, (T *This, ModuleID moduleId, mdMethodDef methodId, \
        FunctionID functionId, HRESULT hrStatus)) \
    X(4, HRESULT, MovedReferences2, (T *This, ULONG cMovedObjectIDRanges, \
        ObjectID oldObjectIDRangeStart[], ObjectID newObjectIDRangeStart[], \
        SIZE_T cObjectIDRangeLength[])) \
    X(4, HRESULT, SurvivingReferences2, (T *This, ULONG cSurvivingObjectIDRanges, \
        ObjectID objectIDRangeStart[], SIZE_T cObjectIDRangeLength[])) \
    /* ICorProfilerCallback5 */ \
    X(5, HRESULT, ConditionalWeakTableElementReferences, (T *This, ULONG cRootRefs, \
        ObjectID keyRefIds[], ObjectID valueRefIds[], GCHandleID rootIds[])) \
    /* ICorProfilerCallback6 */ \
    X(6, HRESULT, GetAssemblyReferences, (T *This, const WCHAR *wszAssemblyPath, \
        ICorProfilerAssemblyReferenceProvider *pAsmRefProvider)) \
    /* ICorProfilerCallback7 */ \
    X(7, HRESULT, ModuleInMemorySymbolsUpdated, (T *This, ModuleID moduleId)) \
    /* ICorProfilerCallback8 */ \
    X(8, HRESULT, DynamicMethodJITCompilationStarted, (T *This, FunctionID functionId, \
        BOOL fIsSafeToBlock, LPCBYTE pILHeader, ULONG cbILHeader)) \
    X(8, HRESULT, DynamicMethodJITCompilationFinished, (T *This, FunctionID functionId, \
        HRESULT hrStatus, BOOL fIsSafeToBlock)) \
    /* ICorProfilerCallback9 */ \
    X(9, HRESULT, DynamicMethodUnloaded, (T *This, FunctionID functionId)) \
    /* ICorProfilerCallback10 */ \
    X(10, HRESULT, EventPipeEventDelivered, (T *This, EVENTPIPE_PROVIDER provider, DWORD eventId, \
        DWORD eventVersion, ULONG cbMetadataBlob, LPCBYTE metadataBlob, ULONG cbEventData, \
        LPCBYTE eventData, LPCGUID pActivityId, LPCGUID pRelatedActivityId, ThreadID eventThread, \
        ULONG numStackFrames, UINT_PTR stackFrames[])) \
    X(10, HRESULT, EventPipeProviderCreated, (T *This, EVENTPIPE_PROVIDER provider)) \
    /* ICorProfilerCallback11 */ \
    X(11, HRESULT, LoadAsNotificationOnly, (T *This, BOOL *pbNotificationOnly))

/* ICorProfilerInfo .. ICorProfilerInfo15: implemented by the runtime. */
#define CLR_INFO_METHODS(X, T) \
    CLR_IUNKNOWN_METHODS(X, T) \
    /* ICorProfilerInfo */ \
    X(1, HRESULT, GetClassFromObject, (T *This, ObjectID objectId, ClassID *pClassId)) \
    X(1, HRESULT, GetClassFromToken, (T *This, ModuleID moduleId, mdTypeDef typeDef, \
        ClassID *pClassId)) \
    X(1, HRESULT, GetCodeInfo, (T *This, FunctionID functionId, LPCBYTE *pStart, ULONG *pcSize)) \
    X(1, HRESULT, GetEventMask, (T *This, DWORD *pdwEvents)) \
    X(1, HRESULT, GetFunctionFromIP, (T *This, LPCBYTE ip, FunctionID *pFunctionId)) \
    X(1, HRESULT, GetFunctionFromToken, (T *This, ModuleID moduleId, mdToken token, \
        FunctionID *pFunctionId)) \
    X(1, HRESULT, GetHandleFromThread, (T *This, ThreadID threadId, HANDLE *phThread)) \
    X(1, HRESULT, GetObjectSize, (T *This, ObjectID objectId, ULONG *pcSize)) \
    X(1, HRESULT, IsArrayClass, (T *This, ClassID classId, CorElementType *pBaseElemType, \
        ClassID *pBaseClassId, ULONG *pcRank)) \
    X(1, HRESULT, GetThreadInfo, (T *This, ThreadID threadId, DWORD *pdwWin32ThreadId)) \
    X(1, HRESULT, GetCurrentThreadID, (T *This, ThreadID *pThreadId)) \
    X(1, HRESULT, GetClassIDInfo, (T *This, ClassID classId, ModuleID *pModuleId, \
        mdTypeDef *pTypeDefToken)) \
    X(1, HRESULT, GetFunctionInfo, (T *This, FunctionID functionId, ClassID *pClassId, \
        ModuleID *pModuleId, mdToken *pToken)) \
    X(1, HRESULT, SetEventMask, (T *This, DWORD dwEvents)) \
    X(1, HRESULT, SetEnterLeaveFunctionHooks, (T *This, FunctionEnter *pFuncEnter, \
        FunctionLeave *pFuncLeave, FunctionTailcall *pFuncTailcall)) \
    X(1, HRESULT, SetFunctionIDMapper, (T *This, FunctionIDMapper *pFunc)) \
    X(1, HRESULT, GetTokenAndMetaDataFromFunction, (T *This, FunctionID functionId, REFIID riid, \
        IUnknown **ppImport, mdToken *pToken)) \
    X(1, HRESULT, GetModuleInfo, (T *This, ModuleID moduleId, LPCBYTE *ppBaseLoadAddress, \
        ULONG cchName, ULONG *pcchName, WCHAR szName[], AssemblyID *pAssemblyId)) \
    X(1, HRESULT, GetModuleMetaData, (T *This, ModuleID moduleId, DWORD dwOpenFlags, REFIID riid, \
        IUnknown **ppOut)) \
    X(1, HRESULT, GetILFunctionBody, (T *This, ModuleID moduleId, mdMethodDef methodId, \
        LPCBYTE *ppMethodHeader, ULONG *pcbMethodSize)) \
    X(1, HRESULT, GetILFunctionBodyAllocator, (T *This, ModuleID moduleId, \
        IMethodMalloc **ppMalloc)) \
    X(1, HRESULT, SetILFunctionBody, (T *This, ModuleID moduleId, mdMethodDef methodid, \
        LPCBYTE pbNewILMethodHeader)) \
    X(1, HRESULT, GetAppDomainInfo, (T *This, AppDomainID appDomainId, ULONG cchName, \
        ULONG *pcchName, WCHAR szName[], ProcessID *pProcessId)) \
    X(1, HRESULT, GetAssemblyInfo, (T *This, AssemblyID assemblyId, ULONG cchName, ULONG *pcchName, \
        WCHAR szName[], AppDomainID *pAppDomainId, ModuleID *pModuleId)) \
    X(1, HRESULT, SetFunctionReJIT, (T *This, FunctionID functionId)) \
    X(1, HRESULT, ForceGC, (T *This)) \
    X(1, HRESULT, SetILInstrumentedCodeMap, (T *This, FunctionID functionId, BOOL fStartJit, \
        ULONG cILMapEntries, COR_IL_MAP rgILMapEntries[])) \
    X(1, HRESULT, GetInprocInspectionInterface, (T *This, IUnknown **ppicd)) \
    X(1, HRESULT, GetInprocInspectionIThisThread, (T *This, IUnknown **ppicd)) \
    X(1, HRESULT, GetThreadContext, (T *This, ThreadID threadId, ContextID *pContextId)) \
    X(1, HRESULT, BeginInprocDebugging, (T *This, BOOL fThisThreadOnly, \
        DWORD *pdwProfilerContext)) \
    X(1, HRESULT, EndInprocDebugging, (T *This, DWORD dwProfilerContext)) \
    X(1, HRESULT, GetILToNativeMapping, (T *This, FunctionID functionId, ULONG32 cMap, \
        ULONG32 *pcMap, COR_DEBUG_IL_TO_NATIVE_MAP map[])) \
    /* ICorProfilerInfo2 */ \
    X(2, HRESULT, DoStackSnapshot, (T *This, ThreadID thread, StackSnapshotCallback *callback, \
        ULONG32 infoFlags, void *clientData, BYTE context[], ULONG32 contextSize)) \
    X(2, HRESULT, SetEnterLeaveFunctionHooks2, (T *This, FunctionEnter2 *pFuncEnter, \
        FunctionLeave2 *pFuncLeave, FunctionTailcall2 *pFuncTailcall)) \
    X(2, HRESULT, GetFunctionInfo2, (T *This, FunctionID funcId, COR_PRF_FRAME_INFO frameInfo, \
        ClassID *pClassId, ModuleID *pModuleId, mdToken *pToken, ULONG32 cTypeArgs, \
        ULONG32 *pcTypeArgs, ClassID typeArgs[])) \
    X(2, HRESULT, GetStringLayout, (T *This, ULONG *pBufferLengthOffset, \
        ULONG *pStringLengthOffset, ULONG *pBufferOffset)) \
    X(2, HRESULT, GetClassLayout, (T *This, ClassID classID, COR_FIELD_OFFSET rFieldOffset[], \
        ULONG cFieldOffset, ULONG *pcFieldOffset, ULONG *pulClassSize)) \
    X(2, HRESULT, GetClassIDInfo2, (T *This, ClassID classId, ModuleID *pModuleId, \
        mdTypeDef *pTypeDefToken, ClassID *pParentClassId, ULONG32 cNumTypeArgs, \
        ULONG32 *pcNumTypeArgs, ClassID typeArgs[])) \
    X(2, HRESULT, GetCodeInfo2, (T *This, FunctionID functionID, ULONG32 cCodeInfos, \
        ULONG32 *pcCodeInfos, COR_PRF_CODE_INFO codeInfos[])) \
    X(2, HRESULT, GetClassFromTokenAndTypeArgs, (T *This, ModuleID moduleID, mdTypeDef typeDef, \
        ULONG32 cTypeArgs, ClassID typeArgs[], ClassID *pClassID)) \
    X(2, HRESULT, GetFunctionFromTokenAndTypeArgs, (T *This, ModuleID moduleID, \
        mdMethodDef funcDef, ClassID classId, ULONG32 cTypeArgs, ClassID typeArgs[], \
        FunctionID *pFunctionID)) \
    X(2, HRESULT, EnumModuleFrozenObjects, (T *This, ModuleID moduleID, \
        ICorProfilerObjectEnum **ppEnum)) \
    X(2, HRESULT, GetArrayObjectInfo, (T *This, ObjectID objectId, ULONG32 cDimensions, \
        ULONG32 pDimensionSizes[], int pDimensionLowerBounds[], BYTE **ppData)) \
    X(2, HRESULT, GetBoxClassLayout, (T *This, ClassID classId, ULONG32 *pBufferOffset)) \
    X(2, HRESULT, GetThreadAppDomain, (T *This, ThreadID threadId, AppDomainID *pAppDomainId)) \
    X(2, HRESULT, GetRVAStaticAddress, (T *This, ClassID classId, mdFieldDef fieldToken, \
        void **ppAddress)) \
    X(2, HRESULT, GetAppDomainStaticAddress, (T *This, ClassID classId, mdFieldDef fieldToken, \
        AppDomainID appDomainId, void **ppAddress)) \
    X(2, HRESULT, GetThreadStaticAddress, (T *This, ClassID classId, mdFieldDef fieldToken, \
        ThreadID threadId, void **ppAddress)) \
    X(2, HRESULT, GetContextStaticAddress, (T *This, ClassID classId, mdFieldDef fieldToken, \
        ContextID contextId, void **ppAddress)) \
    X(2, HRESULT, GetStaticFieldInfo, (T *This, ClassID classId, mdFieldDef fieldToken, \
        COR_PRF_STATIC_TYPE *pFieldInfo)) \
    X(2, HRESULT, GetGenerationBounds, (T *This, ULONG cObjectRanges, ULONG *pcObjectRanges, \
        COR_PRF_GC_GENERATION_RANGE ranges[])) \
    X(2, HRESULT, GetObjectGeneration, (T *This, ObjectID objectId, \
        COR_PRF_GC_GENERATION_RANGE *range)) \
    X(2, HRESULT, GetNotifiedExceptionClauseInfo, (T *This, COR_PRF_EX_CLAUSE_INFO *pinfo)) \
    /* ICorProfilerInfo3 */ \
    X(3, HRESULT, EnumJITedFunctions, (T *This, ICorProfilerFunctionEnum **ppEnum)) \
    X(3, HRESULT, RequestProfilerDetach, (T *This, DWORD dwExpectedCompletionMilliseconds)) \
    X(3, HRESULT, SetFunctionIDMapper2, (T *This, FunctionIDMapper2 *pFunc, void *clientData)) \
    X(3, HRESULT, GetStringLayout2, (T *This, ULONG *pStringLengthOffset, ULONG *pBufferOffset)) \
    X(3, HRESULT, SetEnterLeaveFunctionHooks3, (T *This, FunctionEnter3 *pFuncEnter3, \
        FunctionLeave3 *pFuncLeave3, FunctionTailcall3 *pFuncTailcall3)) \
    X(3, HRESULT, SetEnterLeaveFunctionHooks3WithInfo, (T *This, \
        FunctionEnter3WithInfo *pFuncEnter3WithInfo, FunctionLeave3WithInfo *pFuncLeave3WithInfo, \
        FunctionTailcall3WithInfo *pFuncTailcall3WithInfo)) \
    X(3, HRESULT, GetFunctionEnter3Info, (T *This, FunctionID functionId, COR_PRF_ELT_INFO eltInfo, \
        COR_PRF_FRAME_INFO *pFrameInfo, ULONG *pcbArgumentInfo, \
        COR_PRF_FUNCTION_ARGUMENT_INFO *pArgumentInfo)) \
    X(3, HRESULT, GetFunctionLeave3Info, (T *This, FunctionID functionId, COR_PRF_ELT_INFO eltInfo, \
        COR_PRF_FRAME_INFO *pFrameInfo, COR_PRF_FUNCTION_ARGUMENT_RANGE *pRetvalRange)) \
    X(3, HRESULT, GetFunctionTailcall3Info, (T *This, FunctionID functionId, \
        COR_PRF_ELT_INFO eltInfo, COR_PRF_FRAME_INFO *pFrameInfo)) \
    X(3, HRESULT, EnumModules, (T *This, ICorProfilerModuleEnum **ppEnum)) \
    X(3, HRESULT, GetRuntimeInformation, (T *This, USHORT *pClrInstanceId, \
        COR_PRF_RUNTIME_TYPE *pRuntimeType, USHORT *pMajorVersion, USHORT *pMinorVersion, \
        USHORT *pBuildNumber, USHORT *pQFEVersion, ULONG cchVersionString, \
        ULONG *pcchVersionString, WCHAR szVersionString[])) \
    X(3, HRESULT, GetThreadStaticAddress2, (T *This, ClassID classId, mdFieldDef fieldToken, \
        AppDomainID appDomainId, ThreadID threadId, void **ppAddress)) \
    X(3, HRESULT, GetAppDomainsContainingModule, (T *This, ModuleID moduleId, \
        ULONG32 cAppDomainIds, ULONG32 *pcAppDomainIds, AppDomainID appDomainIds[])) \
    X(3, HRESULT, GetModuleInfo2, (T *This, ModuleID moduleId, LPCBYTE *ppBaseLoadAddress, \
        ULONG cchName, ULONG *pcchName, WCHAR szName[], AssemblyID *pAssemblyId, \
        DWORD *pdwModuleFlags)) \
    /* ICorProfilerInfo4 */ \
    X(4, HRESULT, EnumThreads, (T *This, ICorProfilerThreadEnum **ppEnum)) \
    X(4, HRESULT, InitializeCurrentThread, (T *This)) \
    X(4, HRESULT, RequestReJIT, (T *This, ULONG cFunctions, ModuleID moduleIds[], \
        mdMethodDef methodIds[])) \
    X(4, HRESULT, RequestRevert, (T *This, ULONG cFunctions, ModuleID moduleIds[], \
        mdMethodDef methodIds[], HRESULT status[])) \
    X(4, HRESULT, GetCodeInfo3, (T *This, FunctionID functionID, ReJITID reJitId, \
        ULONG32 cCodeInfos, ULONG32 *pcCodeInfos, COR_PRF_CODE_INFO codeInfos[])) \
    X(4, HRESULT, GetFunctionFromIP2, (T *This, LPCBYTE ip, FunctionID *pFunctionId, \
        ReJITID *pReJitId)) \
    X(4, HRESULT, GetReJITIDs, (T *This, FunctionID functionId, ULONG cReJitIds, ULONG *pcReJitIds, \
        ReJITID reJitIds[])) \
    X(4, HRESULT, GetILToNativeMapping2, (T *This, FunctionID functionId, ReJITID reJitId, \
        ULONG32 cMap, ULONG32 *pcMap, COR_DEBUG_IL_TO_NATIVE_MAP map[])) \
    X(4, HRESULT, EnumJITedFunctions2, (T *This, ICorProfilerFunctionEnum **ppEnum)) \
    X(4, HRESULT, GetObjectSize2, (T *This, ObjectID objectId, SIZE_T *pcSize)) \
    /* ICorProfilerInfo5 */ \
    X(5, HRESULT, GetEventMask2, (T *This, DWORD *pdwEventsLow, DWORD *pdwEventsHigh)) \
    X(5, HRESULT, SetEventMask2, (T *This, DWORD dwEventsLow, DWORD dwEventsHigh)) \
    /* ICorProfilerInfo6 */ \
    X(6, HRESULT, EnumNgenModuleMethodsInliningThisMethod, (T *This, ModuleID inlinersModuleId, \
        ModuleID inlineeModuleId, mdMethodDef inlineeMethodId, BOOL *incompleteData, \
        ICorProfilerMethodEnum **ppEnum)) \
    /* ICorProfilerInfo7 */ \
    X(7, HRESULT, ApplyMetaData, (T *This, ModuleID moduleId)) \
    X(7, HRESULT, GetInMemorySymbolsLength, (T *This, ModuleID moduleId, \
        DWORD *pCountSymbolBytes)) \
    X(7, HRESULT, ReadInMemorySymbols, (T *This, ModuleID moduleId, DWORD symbolsReadOffset, \
        BYTE *pSymbolBytes, DWORD countSymbolBytes, DWORD *pCountSymbolBytesRead)) \
    /* ICorProfilerInfo8 */ \
    X(8, HRESULT, IsFunctionDynamic, (T *This, FunctionID functionId, BOOL *isDynamic)) \
    X(8, HRESULT, GetFunctionFromIP3, (T *This, LPCBYTE ip, FunctionID *functionId, \
        ReJITID *pReJitId)) \
    X(8, HRESULT, GetDynamicFunctionInfo, (T *This, FunctionID functionId, ModuleID *moduleId, \
        PCCOR_SIGNATURE *ppvSig, ULONG *pbSig, ULONG cchName, ULONG *pcchName, WCHAR wszName[])) \
    /* ICorProfilerInfo9 */ \
    X(9, HRESULT, GetNativeCodeStartAddresses, (T *This, FunctionID functionID, ReJITID reJitId, \
        ULONG32 cCodeStartAddresses, ULONG32 *pcCodeStartAddresses, \
        UINT_PTR codeStartAddresses[])) \
    X(9, HRESULT, GetILToNativeMapping3, (T *This, UINT_PTR pNativeCodeStartAddress, ULONG32 cMap, \
        ULONG32 *pcMap, COR_DEBUG_IL_TO_NATIVE_MAP map[])) \
    X(9, HRESULT, GetCodeInfo4, (T *This, UINT_PTR pNativeCodeStartAddress, ULONG32 cCodeInfos, \
        ULONG32 *pcCodeInfos, COR_PRF_CODE_INFO codeInfos[])) \
    /* ICorProfilerInfo10 */ \
    X(10, HRESULT, EnumerateObjectReferences, (T *This, ObjectID objectId, \
        ObjectReferenceCallback callback, void *clientData)) \
    X(10, HRESULT, IsFrozenObject, (T *This, ObjectID objectId, BOOL *pbFrozen)) \
    X(10, HRESULT, GetLOHObjectSizeThreshold, (T *This, DWORD *pThreshold)) \
    X(10, HRESULT, RequestReJITWithInliners, (T *This, DWORD dwRejitFlags, ULONG cFunctions, \
        ModuleID moduleIds[], mdMethodDef methodIds[])) \
    X(10, HRESULT, SuspendRuntime, (T *This)) \
    X(10, HRESULT, ResumeRuntime, (T *This)) \
    /* ICorProfilerInfo11 */ \
    X(11, HRESULT, GetEnvironmentVariable, (T *This, const WCHAR *szName, ULONG cchValue, \
        ULONG *pcchValue, WCHAR szValue[])) \
    X(11, HRESULT, SetEnvironmentVariable, (T *This, const WCHAR *szName, const WCHAR *szValue)) \
    /* ICorProfilerInfo12 */ \
    X(12, HRESULT, EventPipeStartSession, (T *This, UINT32 cProviderConfigs, \
        COR_PRF_EVENTPIPE_PROVIDER_CONFIG pProviderConfigs[], BOOL requestRundown, \
        EVENTPIPE_SESSION *pSession)) \
    X(12, HRESULT, EventPipeAddProviderToSession, (T *This, EVENTPIPE_SESSION session, \
        COR_PRF_EVENTPIPE_PROVIDER_CONFIG providerConfig)) \
    X(12, HRESULT, EventPipeStopSession, (T *This, EVENTPIPE_SESSION session)) \
    X(12, HRESULT, EventPipeCreateProvider, (T *This, const WCHAR *providerName, \
        EVENTPIPE_PROVIDER *pProvider)) \
    X(12, HRESULT, EventPipeGetProviderInfo, (T *This, EVENTPIPE_PROVIDER provider, ULONG cchName, \
        ULONG *pcchName, WCHAR providerName[])) \
    X(12, HRESULT, EventPipeDefineEvent, (T *This, EVENTPIPE_PROVIDER provider, \
        const WCHAR *eventName, UINT32 eventID, UINT64 keywords, UINT32 eventVersion, UINT32 level, \
        UINT8 opcode, BOOL needStack, UINT32 cParamDescs, \
        COR_PRF_EVENTPIPE_PARAM_DESC pParamDescs[], EVENTPIPE_EVENT *pEvent)) \
    X(12, HRESULT, EventPipeWriteEvent, (T *This, EVENTPIPE_EVENT event, UINT32 cData, \
        COR_PRF_EVENT_DATA data[], LPCGUID pActivityId, LPCGUID pRelatedActivityId)) \
    /* ICorProfilerInfo13 */ \
    X(13, HRESULT, CreateHandle, (T *This, ObjectID object, COR_PRF_HANDLE_TYPE type, \
        ObjectHandleID *pHandle)) \
    X(13, HRESULT, DestroyHandle, (T *This, ObjectHandleID handle)) \
    X(13, HRESULT, GetObjectIDFromHandle, (T *This, ObjectHandleID handle, ObjectID *pObject)) \
    /* ICorProfilerInfo14 */ \
    X(14, HRESULT, EnumerateNonGCObjects, (T *This, ICorProfilerObjectEnum **ppEnum)) \
    X(14, HRESULT, GetNonGCHeapBounds, (T *This, ULONG cObjectRanges, ULONG *pcObjectRanges, \
        COR_PRF_NONGC_HEAP_RANGE ranges[])) \
    X(14, HRESULT, EventPipeCreateProvider2, (T *This, const WCHAR *providerName, \
        EventPipeProviderCallback *pCallback, EVENTPIPE_PROVIDER *pProvider)) \
    /* ICorProfilerInfo15 */ \
    X(15, HRESULT, EnumerateGCHeapObjects, (T *This, ObjectCallback callback, void *callbackState))

/* The enumerators of corprof.idl; all share one shape. */
#define CLR_OBJECTENUM_METHODS(X, T) \
    CLR_IUNKNOWN_METHODS(X, T) \
    X(1, HRESULT, Skip, (T *This, ULONG celt)) \
    X(1, HRESULT, Reset, (T *This)) \
    X(1, HRESULT, Clone, (T *This, ICorProfilerObjectEnum **ppEnum)) \
    X(1, HRESULT, GetCount, (T *This, ULONG *pcelt)) \
    X(1, HRESULT, Next, (T *This, ULONG celt, ObjectID objects[], ULONG *pceltFetched))

#define CLR_FUNCTIONENUM_METHODS(X, T) \
    CLR_IUNKNOWN_METHODS(X, T) \
    X(1, HRESULT, Skip, (T *This, ULONG celt)) \
    X(1, HRESULT, Reset, (T *This)) \
    X(1, HRESULT, Clone, (T *This, ICorProfilerFunctionEnum **ppEnum)) \
    X(1, HRESULT, GetCount, (T *This, ULONG *pcelt)) \
    X(1, HRESULT, Next, (T *This, ULONG celt, COR_PRF_FUNCTION ids[], ULONG *pceltFetched))

#define CLR_MODULEENUM_METHODS(X, T) \
    CLR_IUNKNOWN_METHODS(X, T) \
    X(1, HRESULT, Skip, (T *This, ULONG celt)) \
    X(1, HRESULT, Reset, (T *This)) \
    X(1, HRESULT, Clone, (T *This, ICorProfilerModuleEnum **ppEnum)) \
    X(1, HRESULT, GetCount, (T *This, ULONG *pcelt)) \
    X(1, HRESULT, Next, (T *This, ULONG celt, ModuleID ids[], ULONG *pceltFetched))

#define CLR_METHODENUM_METHODS(X, T) \
    CLR_IUNKNOWN_METHODS(X, T) \
    X(1, HRESULT, Skip, (T *This, ULONG celt)) \
    X(1, HRESULT, Reset, (T *This)) \
    X(1, HRESULT, Clone, (T *This, ICorProfilerMethodEnum **ppEnum)) \
    X(1, HRESULT, GetCount, (T *This, ULONG *pcelt)) \
    X(1, HRESULT, Next, (T *This, ULONG celt, COR_PRF_METHOD elements[], ULONG *pceltFetched))

#define CLR_THREADENUM_METHODS(X, T) \
    CLR_IUNKNOWN_METHODS(X, T) \
    X(1, HRESULT, Skip, (T *This, ULONG celt)) \
    X(1, HRESULT, Reset, (T *This)) \
    X(1, HRESULT, Clone, (T *This, ICorProfilerThreadEnum **ppEnum)) \
    X(1, HRESULT, GetCount, (T *This, ULONG *pcelt)) \
    X(1, HRESULT, Next, (T *This, ULONG celt, ThreadID ids[], ULONG *pceltFetched))

/* IMetaDataImport (cor.h).  Note CloseEnum returns void and IsValidToken
 * returns BOOL: the only non-HRESULT methods. */
#define CLR_METADATAIMPORT_METHODS(X, T) \
    CLR_IUNKNOWN_METHODS(X, T) \
    /* IMetaDataImport */ \
    X(1, void, CloseEnum, (T *This, HCORENUM hEnum)) \
    X(1, HRESULT, CountEnum, (T *This, HCORENUM hEnum, ULONG *pulCount)) \
    X(1, HRESULT, ResetEnum, (T *This, HCORENUM hEnum, ULONG ulPos)) \
    X(1, HRESULT, EnumTypeDefs, (T *This, HCORENUM *phEnum, mdTypeDef rTypeDefs[], ULONG cMax, \
        ULONG *pcTypeDefs)) \
    X(1, HRESULT, EnumInterfaceImpls, (T *This, HCORENUM *phEnum, mdTypeDef td, \
        mdInterfaceImpl rImpls[], ULONG cMax, ULONG *pcImpls)) \
    X(1, HRESULT, EnumTypeRefs, (T *This, HCORENUM *phEnum, mdTypeRef rTypeRefs[], ULONG cMax, \
        ULONG *pcTypeRefs)) \
    X(1, HRESULT, FindTypeDefByName, (T *This, LPCWSTR szTypeDef, mdToken tkEnclosingClass, \
        mdTypeDef *ptd)) \
    X(1, HRESULT, GetScopeProps, (T *This, LPWSTR szName, ULONG cchName, ULONG *pchName, \
        GUID *pmvid)) \
    X(1, HRESULT, GetModuleFromScope, (T *This, mdModule *pmd)) \
    X(1, HRESULT, GetTypeDefProps, (T *This, mdTypeDef td, LPWSTR szTypeDef, ULONG cchTypeDef, \
        ULONG *pchTypeDef, DWORD *pdwTypeDefFlags, mdToken *ptkExtends)) \
    X(1, HRESULT, GetInterfaceImplProps, (T *This, mdInterfaceImpl iiImpl, mdTypeDef *pClass, \
        mdToken *ptkIface)) \
    X(1, HRESULT, GetTypeRefProps, (T *This, mdTypeRef tr, mdToken *ptkResolutionScope, \
        LPWSTR szName, ULONG cchName, ULONG *pchName)) \
    X(1, HRESULT, ResolveTypeRef, (T *This, mdTypeRef tr, REFIID riid, IUnknown **ppIScope, \
        mdTypeDef *ptd)) \
    X(1, HRESULT, EnumMembers, (T *This, HCORENUM *phEnum, mdTypeDef cl, mdToken rMembers[], \
        ULONG cMax, ULONG *pcTokens)) \
    X(1, HRESULT, EnumMembersWithName, (T *This, HCORENUM *phEnum, mdTypeDef cl, LPCWSTR szName, \
        mdToken rMembers[], ULONG cMax, ULONG *pcTokens)) \
    X(1, HRESULT, EnumMethods, (T *This, HCORENUM *phEnum, mdTypeDef cl, mdMethodDef rMethods[], \
        ULONG cMax, ULONG *pcTokens)) \
    X(1, HRESULT, EnumMethodsWithName, (T *This, HCORENUM *phEnum, mdTypeDef cl, LPCWSTR szName, \
        mdMethodDef rMethods[], ULONG cMax, ULONG *pcTokens)) \
    X(1, HRESULT, EnumFields, (T *This, HCORENUM *phEnum, mdTypeDef cl, mdFieldDef rFields[], \
        ULONG cMax, ULONG *pcTokens)) \
    X(1, HRESULT, EnumFieldsWithName, (T *This, HCORENUM *phEnum, mdTypeDef cl, LPCWSTR szName, \
        mdFieldDef rFields[], ULONG cMax, ULONG *pcTokens)) \
    X(1, HRESULT, EnumParams, (T *This, HCORENUM *phEnum, mdMethodDef mb, mdParamDef rParams[], \
        ULONG cMax, ULONG *pcTokens)) \
    X(1, HRESULT, EnumMemberRefs, (T *This, HCORENUM *phEnum, mdToken tkParent, \
        mdMemberRef rMemberRefs[], ULONG cMax, ULONG *pcTokens)) \
    X(1, HRESULT, EnumMethodImpls, (T *This, HCORENUM *phEnum, mdTypeDef td, mdToken rMethodBody[], \
        mdToken rMethodDecl[], ULONG cMax, ULONG *pcTokens)) \
    X(1, HRESULT, EnumPermissionSets, (T *This, HCORENUM *phEnum, mdToken tk, DWORD dwActions, \
        mdPermission rPermission[], ULONG cMax, ULONG *pcTokens)) \
    X(1, HRESULT, FindMember, (T *This, mdTypeDef td, LPCWSTR szName, PCCOR_SIGNATURE pvSigBlob, \
        ULONG cbSigBlob, mdToken *pmb)) \
    X(1, HRESULT, FindMethod, (T *This, mdTypeDef td, LPCWSTR szName, PCCOR_SIGNATURE pvSigBlob, \
        ULONG cbSigBlob, mdMethodDef *pmb)) \
    X(1, HRESULT, FindField, (T *This, mdTypeDef td, LPCWSTR szName, PCCOR_SIGNATURE pvSigBlob, \
        ULONG cbSigBlob, mdFieldDef *pmb)) \
    X(1, HRESULT, FindMemberRef, (T *This, mdTypeRef td, LPCWSTR szName, PCCOR_SIGNATURE pvSigBlob, \
        ULONG cbSigBlob, mdMemberRef *pmr)) \
    X(1, HRESULT, GetMethodProps, (T *This, mdMethodDef mb, mdTypeDef *pClass, LPWSTR szMethod, \
        ULONG cchMethod, ULONG *pchMethod, DWORD *pdwAttr, PCCOR_SIGNATURE *ppvSigBlob, \
        ULONG *pcbSigBlob, ULONG *pulCodeRVA, DWORD *pdwImplFlags)) \
    X(1, HRESULT, GetMemberRefProps, (T *This, mdMemberRef mr, mdToken *ptk, LPWSTR szMember, \
        ULONG cchMember, ULONG *pchMember, PCCOR_SIGNATURE *ppvSigBlob, ULONG *pbSig)) \
    X(1, HRESULT, EnumProperties, (T *This, HCORENUM *phEnum, mdTypeDef td, \
        mdProperty rProperties[], ULONG cMax, ULONG *pcProperties)) \
    X(1, HRESULT, EnumEvents, (T *This, HCORENUM *phEnum, mdTypeDef td, mdEvent rEvents[], \
        ULONG cMax, ULONG *pcEvents)) \
    X(1, HRESULT, GetEventProps, (T *This, mdEvent ev, mdTypeDef *pClass, LPCWSTR szEvent, \
        ULONG cchEvent, ULONG *pchEvent, DWORD *pdwEventFlags, mdToken *ptkEventType, \
        mdMethodDef *pmdAddOn, mdMethodDef *pmdRemoveOn, mdMethodDef *pmdFire, \
        mdMethodDef rmdOtherMethod[], ULONG cMax, ULONG *pcOtherMethod)) \
    X(1, HRESULT, EnumMethodSemantics, (T *This, HCORENUM *phEnum, mdMethodDef mb, \
        mdToken rEventProp[], ULONG cMax, ULONG *pcEventProp)) \
    X(1, HRESULT, GetMethodSemantics, (T *This, mdMethodDef mb, mdToken tkEventProp, \
        DWORD *pdwSemanticsFlags)) \
    X(1, HRESULT, GetClassLayout, (T *This, mdTypeDef td, DWORD *pdwPackSize, \
        COR_FIELD_OFFSET rFieldOffset[], ULONG cMax, ULONG *pcFieldOffset, ULONG *pulClassSize)) \
    X(1, HRESULT, GetFieldMarshal, (T *This, mdToken tk, PCCOR_SIGNATURE *ppvNativeType, \
        ULONG *pcbNativeType)) \
    X(1, HRESULT, GetRVA, (T *This, mdToken tk, ULONG *pulCodeRVA, DWORD *pdwImplFlags)) \
    X(1, HRESULT, GetPermissionSetProps, (T *This, mdPermission pm, DWORD *pdwAction, \
        void const **ppvPermission, ULONG *pcbPermission)) \
    X(1, HRESULT, GetSigFromToken, (T *This, mdSignature mdSig, PCCOR_SIGNATURE *ppvSig, \
        ULONG *pcbSig)) \
    X(1, HRESULT, GetModuleRefProps, (T *This, mdModuleRef mur, LPWSTR szName, ULONG cchName, \
        ULONG *pchName)) \
    X(1, HRESULT, EnumModuleRefs, (T *This, HCORENUM *phEnum, mdModuleRef rModuleRefs[], \
        ULONG cmax, ULONG *pcModuleRefs)) \
    X(1, HRESULT, GetTypeSpecFromToken, (T *This, mdTypeSpec typespec, PCCOR_SIGNATURE *ppvSig, \
        ULONG *pcbSig)) \
    X(1, HRESULT, GetNameFromToken, (T *This, mdToken tk, MDUTF8CSTR *pszUtf8NamePtr)) \
    X(1, HRESULT, EnumUnresolvedMethods, (T *This, HCORENUM *phEnum, mdToken rMethods[], \
        ULONG cMax, ULONG *pcTokens)) \
    X(1, HRESULT, GetUserString, (T *This, mdString stk, LPWSTR szString, ULONG cchString, \
        ULONG *pchString)) \
    X(1, HRESULT, GetPinvokeMap, (T *This, mdToken tk, DWORD *pdwMappingFlags, LPWSTR szImportName, \
        ULONG cchImportName, ULONG *pchImportName, mdModuleRef *pmrImportDLL)) \
    X(1, HRESULT, EnumSignatures, (T *This, HCORENUM *phEnum, mdSignature rSignatures[], \
        ULONG cmax, ULONG *pcSignatures)) \
    X(1, HRESULT, EnumTypeSpecs, (T *This, HCORENUM *phEnum, mdTypeSpec rTypeSpecs[], ULONG cmax, \
        ULONG *pcTypeSpecs)) \
    X(1, HRESULT, EnumUserStrings, (T *This, HCORENUM *phEnum, mdString rStrings[], ULONG cmax, \
        ULONG *pcStrings)) \
    X(1, HRESULT, GetParamForMethodIndex, (T *This, mdMethodDef md, ULONG ulParamSeq, \
        mdParamDef *ppd)) \
    X(1, HRESULT, EnumCustomAttributes, (T *This, HCORENUM *phEnum, mdToken tk, mdToken tkType, \
        mdCustomAttribute rCustomAttributes[], ULONG cMax, ULONG *pcCustomAttributes)) \
    X(1, HRESULT, GetCustomAttributeProps, (T *This, mdCustomAttribute cv, mdToken *ptkObj, \
        mdToken *ptkType, void const **ppBlob, ULONG *pcbSize)) \
    X(1, HRESULT, FindTypeRef, (T *This, mdToken tkResolutionScope, LPCWSTR szName, \
        mdTypeRef *ptr)) \
    X(1, HRESULT, GetMemberProps, (T *This, mdToken mb, mdTypeDef *pClass, LPWSTR szMember, \
        ULONG cchMember, ULONG *pchMember, DWORD *pdwAttr, PCCOR_SIGNATURE *ppvSigBlob, \
        ULONG *pcbSigBlob, ULONG *pulCodeRVA, DWORD *pdwImplFlags, DWORD *pdwCPlusTypeFlag, \
        UVCP_CONSTANT *ppValue, ULONG *pcchValue)) \
    X(1, HRESULT, GetFieldProps, (T *This, mdFieldDef mb, mdTypeDef *pClass, LPWSTR szField, \
        ULONG cchField, ULONG *pchField, DWORD *pdwAttr, PCCOR_SIGNATURE *ppvSigBlob, \
        ULONG *pcbSigBlob, DWORD *pdwCPlusTypeFlag, UVCP_CONSTANT *ppValue, ULONG *pcchValue)) \
    X(1, HRESULT, GetPropertyProps, (T *This, mdProperty prop, mdTypeDef *pClass, \
        LPCWSTR szProperty, ULONG cchProperty, ULONG *pchProperty, DWORD *pdwPropFlags, \
        PCCOR_SIGNATURE *ppvSig, ULONG *pbSig, DWORD *pdwCPlusTypeFlag, \
        UVCP_CONSTANT *ppDefaultValue, ULONG *pcchDefaultValue, mdMethodDef *pmdSetter, \
        mdMethodDef *pmdGetter, mdMethodDef rmdOtherMethod[], ULONG cMax, ULONG *pcOtherMethod)) \
    X(1, HRESULT, GetParamProps, (T *This, mdParamDef tk, mdMethodDef *pmd, ULONG *pulSequence, \
        LPWSTR szName, ULONG cchName, ULONG *pchName, DWORD *pdwAttr, DWORD *pdwCPlusTypeFlag, \
        UVCP_CONSTANT *ppValue, ULONG *pcchValue)) \
    X(1, HRESULT, GetCustomAttributeByName, (T *This, mdToken tkObj, LPCWSTR szName, \
        const void **ppData, ULONG *pcbData)) \
    X(1, BOOL, IsValidToken, (T *This, mdToken tk)) \
    X(1, HRESULT, GetNestedClassProps, (T *This, mdTypeDef tdNestedClass, \
        mdTypeDef *ptdEnclosingClass)) \
    X(1, HRESULT, GetNativeCallConvFromSig, (T *This, void const *pvSig, ULONG cbSig, \
        ULONG *pCallConv)) \
    X(1, HRESULT, IsGlobal, (T *This, mdToken pd, int *pbGlobal))

#define CLR_METADATAIMPORT2_METHODS(X, T) \
    CLR_METADATAIMPORT_METHODS(X, T) \
    /* IMetaDataImport2 */ \
    X(2, HRESULT, EnumGenericParams, (T *This, HCORENUM *phEnum, mdToken tk, \
        mdGenericParam rGenericParams[], ULONG cMax, ULONG *pcGenericParams)) \
    X(2, HRESULT, GetGenericParamProps, (T *This, mdGenericParam gp, ULONG *pulParamSeq, \
        DWORD *pdwParamFlags, mdToken *ptOwner, DWORD *reserved, LPWSTR wzname, ULONG cchName, \
        ULONG *pchName)) \
    X(2, HRESULT, GetMethodSpecProps, (T *This, mdMethodSpec mi, mdToken *tkParent, \
        PCCOR_SIGNATURE *ppvSigBlob, ULONG *pcbSigBlob)) \
    X(2, HRESULT, EnumGenericParamConstraints, (T *This, HCORENUM *phEnum, mdGenericParam tk, \
        mdGenericParamConstraint rGenericParamConstraints[], ULONG cMax, \
        ULONG *pcGenericParamConstraints)) \
    X(2, HRESULT, GetGenericParamConstraintProps, (T *This, mdGenericParamConstraint gpc, \
        mdGenericParam *ptGenericParam, mdToken *ptkConstraintType)) \
    X(2, HRESULT, GetPEKind, (T *This, DWORD *pdwPEKind, DWORD *pdwMAchine)) \
    X(2, HRESULT, GetVersionString, (T *This, LPWSTR pwzBuf, DWORD ccBufSize, DWORD *pccBufSize)) \
    X(2, HRESULT, EnumMethodSpecs, (T *This, HCORENUM *phEnum, mdToken tk, \
        mdMethodSpec rMethodSpecs[], ULONG cMax, ULONG *pcMethodSpecs))

/* IMetaDataEmit (cor.h), its slots up to DeleteToken only: the ones after
 * those are never called through this declaration, and a vtable pointer
 * to a longer table serves a shorter declaration. */
#define CLR_METADATAEMIT_METHODS(X, T) \
    CLR_IUNKNOWN_METHODS(X, T) \
    X(1, HRESULT, SetModuleProps, (T *This, LPCWSTR szName)) \
    X(1, HRESULT, Save, (T *This, LPCWSTR szFile, DWORD dwSaveFlags)) \
    X(1, HRESULT, SaveToStream, (T *This, IUnknown *pIStream, DWORD dwSaveFlags)) \
    X(1, HRESULT, GetSaveSize, (T *This, DWORD fSave, DWORD *pdwSaveSize)) \
    X(1, HRESULT, DefineTypeDef, (T *This, LPCWSTR szTypeDef, DWORD dwTypeDefFlags, \
        mdToken tkExtends, mdToken rtkImplements[], mdTypeDef *ptd)) \
    X(1, HRESULT, DefineNestedType, (T *This, LPCWSTR szTypeDef, DWORD dwTypeDefFlags, \
        mdToken tkExtends, mdToken rtkImplements[], mdTypeDef tdEncloser, mdTypeDef *ptd)) \
    X(1, HRESULT, SetHandler, (T *This, IUnknown *pUnk)) \
    X(1, HRESULT, DefineMethod, (T *This, mdTypeDef td, LPCWSTR szName, DWORD dwMethodFlags, \
        PCCOR_SIGNATURE pvSigBlob, ULONG cbSigBlob, ULONG ulCodeRVA, DWORD dwImplFlags, \
        mdMethodDef *pmd)) \
    X(1, HRESULT, DefineMethodImpl, (T *This, mdTypeDef td, mdToken tkBody, mdToken tkDecl)) \
    X(1, HRESULT, DefineTypeRefByName, (T *This, mdToken tkResolutionScope, LPCWSTR szName, \
        mdTypeRef *ptr)) \
    X(1, HRESULT, DefineImportType, (T *This, IMetaDataAssemblyImport *pAssemImport, \
        const void *pbHashValue, ULONG cbHashValue, IMetaDataImport *pImport, \
        mdTypeDef tdImport, IUnknown *pAssemEmit, mdTypeRef *ptr)) \
    X(1, HRESULT, DefineMemberRef, (T *This, mdToken tkImport, LPCWSTR szName, \
        PCCOR_SIGNATURE pvSigBlob, ULONG cbSigBlob, mdMemberRef *pmr)) \
    X(1, HRESULT, DefineImportMember, (T *This, IMetaDataAssemblyImport *pAssemImport, \
        const void *pbHashValue, ULONG cbHashValue, IMetaDataImport *pImport, \
        mdToken mbMember, IUnknown *pAssemEmit, mdToken tkParent, mdMemberRef *pmr)) \
    X(1, HRESULT, DefineEvent, (T *This, mdTypeDef td, LPCWSTR szEvent, DWORD dwEventFlags, \
        mdToken tkEventType, mdMethodDef mdAddOn, mdMethodDef mdRemoveOn, mdMethodDef mdFire, \
        mdMethodDef rmdOtherMethods[], mdEvent *pmdEvent)) \
    X(1, HRESULT, SetClassLayout, (T *This, mdTypeDef td, DWORD dwPackSize, \
        COR_FIELD_OFFSET rFieldOffsets[], ULONG ulClassSize)) \
    X(1, HRESULT, DeleteClassLayout, (T *This, mdTypeDef td)) \
    X(1, HRESULT, SetFieldMarshal, (T *This, mdToken tk, PCCOR_SIGNATURE pvNativeType, \
        ULONG cbNativeType)) \
    X(1, HRESULT, DeleteFieldMarshal, (T *This, mdToken tk)) \
    X(1, HRESULT, DefinePermissionSet, (T *This, mdToken tk, DWORD dwAction, \
        void const *pvPermission, ULONG cbPermission, mdPermission *ppm)) \
    X(1, HRESULT, SetRVA, (T *This, mdMethodDef md, ULONG ulRVA)) \
    X(1, HRESULT, GetTokenFromSig, (T *This, PCCOR_SIGNATURE pvSig, ULONG cbSig, \
        mdSignature *pmsig)) \
    X(1, HRESULT, DefineModuleRef, (T *This, LPCWSTR szName, mdModuleRef *pmur)) \
    X(1, HRESULT, SetParent, (T *This, mdMemberRef mr, mdToken tk)) \
    X(1, HRESULT, GetTokenFromTypeSpec, (T *This, PCCOR_SIGNATURE pvSig, ULONG cbSig, \
        mdTypeSpec *ptypespec)) \
    X(1, HRESULT, SaveToMemory, (T *This, void *pbData, ULONG cbData)) \
    X(1, HRESULT, DefineUserString, (T *This, LPCWSTR szString, ULONG cchString, \
        mdString *pstk)) \
    X(1, HRESULT, DeleteToken, (T *This, mdToken tkObj))

/* IMetaDataAssemblyEmit (cor.h), up to DefineAssemblyRef: a reference to
 * another assembly (flat tracing's counter calls CoreLib's Interlocked). */
#define CLR_METADATAASSEMBLYEMIT_METHODS(X, T) \
    CLR_IUNKNOWN_METHODS(X, T) \
    X(1, HRESULT, DefineAssembly, (T *This, const void *pbPublicKey, ULONG cbPublicKey, \
        ULONG ulHashAlgId, LPCWSTR szName, const ASSEMBLYMETADATA *pMetaData, \
        DWORD dwAssemblyFlags, mdToken *pma)) \
    X(1, HRESULT, DefineAssemblyRef, (T *This, const void *pbPublicKeyOrToken, \
        ULONG cbPublicKeyOrToken, LPCWSTR szName, const ASSEMBLYMETADATA *pMetaData, \
        const void *pbHashValue, ULONG cbHashValue, DWORD dwAssemblyRefFlags, \
        mdToken *pmdar))

/* IMethodMalloc (corprof.idl): the allocator of new IL bodies
 * (GetILFunctionBodyAllocator, SetILFunctionBody). */
#define CLR_METHODMALLOC_METHODS(X, T) \
    CLR_IUNKNOWN_METHODS(X, T) \
    X(1, PVOID, Alloc, (T *This, ULONG cb))

/* ICorProfilerFunctionControl (corprof.idl): what GetReJITParameters
 * hands a profiler to give a rejitted method its IL (live probes). */
#define CLR_FUNCTIONCONTROL_METHODS(X, T) \
    CLR_IUNKNOWN_METHODS(X, T) \
    X(1, HRESULT, SetCodegenFlags, (T *This, DWORD flags)) \
    X(1, HRESULT, SetILFunctionBody, (T *This, ULONG cbNewILMethodHeader, \
        LPCBYTE pbNewILMethodHeader)) \
    X(1, HRESULT, SetILInstrumentedCodeMap, (T *This, ULONG cILMapEntries, \
        COR_IL_MAP rgILMapEntries[]))

/* One function pointer per slot. */
#define CLR_VTBL_SLOT(ver, ret, name, params) ret (STDMETHODCALLTYPE *name) params;

/* Repeats the forward typedef above, which C11 allows. */
#define CLR_DECLARE_INTERFACE(Iface, METHODS) \
    typedef struct Iface Iface; \
    typedef struct Iface##Vtbl { METHODS(CLR_VTBL_SLOT, Iface) } Iface##Vtbl; \
    struct Iface { const Iface##Vtbl *lpVtbl; };

CLR_DECLARE_INTERFACE(IUnknown, CLR_IUNKNOWN_METHODS)
CLR_DECLARE_INTERFACE(IClassFactory, CLR_CLASSFACTORY_METHODS)
CLR_DECLARE_INTERFACE(ICorProfilerCallback11, CLR_CALLBACK_METHODS)
CLR_DECLARE_INTERFACE(ICorProfilerInfo15, CLR_INFO_METHODS)
CLR_DECLARE_INTERFACE(ICorProfilerThreadEnum, CLR_THREADENUM_METHODS)
CLR_DECLARE_INTERFACE(ICorProfilerModuleEnum, CLR_MODULEENUM_METHODS)
CLR_DECLARE_INTERFACE(ICorProfilerFunctionEnum, CLR_FUNCTIONENUM_METHODS)
CLR_DECLARE_INTERFACE(ICorProfilerObjectEnum, CLR_OBJECTENUM_METHODS)
CLR_DECLARE_INTERFACE(ICorProfilerMethodEnum, CLR_METHODENUM_METHODS)
CLR_DECLARE_INTERFACE(IMetaDataImport, CLR_METADATAIMPORT_METHODS)
CLR_DECLARE_INTERFACE(IMetaDataImport2, CLR_METADATAIMPORT2_METHODS)
CLR_DECLARE_INTERFACE(IMetaDataEmit, CLR_METADATAEMIT_METHODS)
CLR_DECLARE_INTERFACE(IMetaDataAssemblyEmit, CLR_METADATAASSEMBLYEMIT_METHODS)
CLR_DECLARE_INTERFACE(IMethodMalloc, CLR_METHODMALLOC_METHODS)
CLR_DECLARE_INTERFACE(ICorProfilerFunctionControl, CLR_FUNCTIONCONTROL_METHODS)

#endif
