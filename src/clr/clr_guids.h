/*
 * clr_guids: the interface IDs corscope asks for or answers to, and a GUID
 * comparison.  Values are the uuid() attributes of corprof.idl and the
 * EXTERN_GUIDs of cor.h (IUnknown and IClassFactory from unknwn.idl).
 */
#ifndef CORSCOPE_CLR_GUIDS_H
#define CORSCOPE_CLR_GUIDS_H

#include "clr/clr_types.h"

CLR_HIDDEN extern const GUID IID_IUnknown;
CLR_HIDDEN extern const GUID IID_IClassFactory;
CLR_HIDDEN extern const GUID IID_ICorProfilerCallback;
CLR_HIDDEN extern const GUID IID_ICorProfilerCallback2;
CLR_HIDDEN extern const GUID IID_ICorProfilerCallback3;
CLR_HIDDEN extern const GUID IID_ICorProfilerCallback4;
CLR_HIDDEN extern const GUID IID_ICorProfilerCallback5;
CLR_HIDDEN extern const GUID IID_ICorProfilerCallback6;
CLR_HIDDEN extern const GUID IID_ICorProfilerCallback7;
CLR_HIDDEN extern const GUID IID_ICorProfilerCallback8;
CLR_HIDDEN extern const GUID IID_ICorProfilerCallback9;
CLR_HIDDEN extern const GUID IID_ICorProfilerCallback10;
CLR_HIDDEN extern const GUID IID_ICorProfilerCallback11;
CLR_HIDDEN extern const GUID IID_ICorProfilerInfo;
CLR_HIDDEN extern const GUID IID_ICorProfilerInfo2;
CLR_HIDDEN extern const GUID IID_ICorProfilerInfo3;
CLR_HIDDEN extern const GUID IID_ICorProfilerInfo4;
CLR_HIDDEN extern const GUID IID_ICorProfilerInfo5;
CLR_HIDDEN extern const GUID IID_ICorProfilerInfo6;
CLR_HIDDEN extern const GUID IID_ICorProfilerInfo7;
CLR_HIDDEN extern const GUID IID_ICorProfilerInfo8;
CLR_HIDDEN extern const GUID IID_ICorProfilerInfo9;
CLR_HIDDEN extern const GUID IID_ICorProfilerInfo10;
CLR_HIDDEN extern const GUID IID_ICorProfilerInfo11;
CLR_HIDDEN extern const GUID IID_ICorProfilerInfo12;
CLR_HIDDEN extern const GUID IID_ICorProfilerInfo13;
CLR_HIDDEN extern const GUID IID_ICorProfilerInfo14;
CLR_HIDDEN extern const GUID IID_ICorProfilerInfo15;
CLR_HIDDEN extern const GUID IID_ICorProfilerObjectEnum;
CLR_HIDDEN extern const GUID IID_ICorProfilerFunctionEnum;
CLR_HIDDEN extern const GUID IID_ICorProfilerModuleEnum;
CLR_HIDDEN extern const GUID IID_ICorProfilerMethodEnum;
CLR_HIDDEN extern const GUID IID_ICorProfilerThreadEnum;
CLR_HIDDEN extern const GUID IID_IMetaDataImport;
CLR_HIDDEN extern const GUID IID_IMetaDataImport2;
CLR_HIDDEN extern const GUID IID_IMetaDataEmit;
CLR_HIDDEN extern const GUID IID_IMetaDataAssemblyEmit;

/* IIDs by version: clr_callback_iids[n] is ICorProfilerCallback<n> (n = 1..11),
 * [0] is IUnknown; clr_info_iids[n] is ICorProfilerInfo<n> (n = 1..15), [0] is
 * IUnknown. */
CLR_HIDDEN extern const GUID *const clr_callback_iids[12];
CLR_HIDDEN extern const GUID *const clr_info_iids[16];

/* 1 when the two GUIDs are equal, else 0. */
CLR_HIDDEN int clr_guid_equal(const GUID *a, const GUID *b);

#endif
