/*
 * product: the identity of corscope that the CLI and the agent must agree
 * on: the class id the runtime loads the agent by.  A unit test checks that
 * the string form (for CORECLR_PROFILER) and the GUID form (for
 * DllGetClassObject) are the same id.
 */
#ifndef CORSCOPE_PRODUCT_H
#define CORSCOPE_PRODUCT_H

#define CORSCOPE_CLSID_STRING "{14DE3B91-04FE-4EFB-B588-CD7BB380C74A}"
#define CORSCOPE_CLSID_INIT \
    {0x14DE3B91, 0x04FE, 0x4EFB, {0xB5, 0x88, 0xCD, 0x7B, 0xB3, 0x80, 0xC7, 0x4A}}

#endif
